"""How a plan (:mod:`.sync`) is written into a shared cell's outputs, the way
JupyterLab 4 reads a shared code cell, so that every tab renders exactly what the
document holds:

* a change to a stream's text is applied to the *last* output only, as "delete the
  last N characters" or "append", and only the first such change of a transaction is
  seen: so we edit the tail stream only, deletions and insertions in separate
  transactions, and at most one text edit per transaction, before any array change;
* an inserted output is always appended and merged into a preceding stream of the same
  name (even one deleted since): so consecutive same-name streams share one ``Text``,
  nothing is inserted mid-array, and a rewrite (a display update, the tail of a long
  output moving on) deletes from an index to the end and appends again, starting with a
  non-stream output.

One transaction per message would cost several times the text in updates and bloat the
YStore: the writer (:mod:`.writer`) batches edits into one plan per ``interval``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pycrdt import Array, Doc, Map, Text

from ...document import writing
from .sync import SyncPlan


def output_map(output: dict[str, Any]) -> Map:
    """A shared output as jupyter_ydoc builds it (stream text as a ``Text``)."""
    value = dict(output)
    if value.get("output_type") == "stream":
        text = value.get("text", "")
        value["text"] = Text(text if isinstance(text, str) else "".join(text))
    return Map(value)


def apply_plan(
    ydoc: Doc, outputs: Array, plan: SyncPlan, finish: Callable[[], None] | None
) -> None:
    """Write ``plan`` into ``outputs``; ``finish`` joins the last transaction."""
    last_step = finish or (lambda: None)
    added = [output_map(output) for output in plan.append]
    if plan.delete_from is not None:
        with writing(ydoc):
            del outputs[plan.delete_from :]
            if plan.edit is None:
                outputs.extend(added)
                last_step()
                return
    if plan.edit is not None:
        removed, insert = plan.edit
        # Bound first: ``ymap["text"] += s`` silently empties the text.
        text: Text = outputs[len(outputs) - 1]["text"]
        if removed:
            end = len(text)  # pycrdt counts UTF-8 bytes
            with writing(ydoc):
                del text[end - removed : end]
        if insert or added or finish is not None:
            with writing(ydoc):
                if insert:
                    text += insert
                if added:
                    outputs.extend(added)
                last_step()
    elif added or finish is not None:
        with writing(ydoc):
            outputs.extend(added)
            last_step()


def tail_length(outputs: Array) -> int | None:
    """Length in bytes of the last output's text if it is a stream."""
    count = len(outputs)
    tail = outputs[count - 1] if count else None
    text = tail.get("text") if isinstance(tail, Map) else None
    return len(text) if isinstance(text, Text) else None
