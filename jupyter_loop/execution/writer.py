"""The one writer of a cell's outputs: batches kernel output into the live notebook.

Writes follow how JupyterLab 4 reads a shared code cell, so every tab renders exactly
what the document holds:

* a change to a stream's text is applied to the *last* output only, as "delete the
  last N characters" or "append", and only the first such change of a transaction is
  seen: so we edit the tail stream only, deletions and insertions in separate
  transactions, and at most one text edit per transaction, before any array change;
* an inserted output is always appended and merged into a preceding stream of the same
  name: so consecutive same-name streams share one ``Text`` and nothing is inserted
  mid-array (a display update rewrites the outputs from the updated one to the end).

Writes are coalesced over ``interval`` seconds per cell: one transaction per message
would cost several times the text in updates and bloat the YStore.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map, Text, Transaction

from ..document import ORIGIN, LiveDocuments, find_cell
from ..errors import NotFound
from .ops import AppendOutput, AppendStream, ClearOutputs, OutputOp, UpdateDisplay, coalesce
from .terminal import TerminalScreen

CellMutation = Callable[[YNotebook, Map], None]


def _utf8_length(text: str) -> int:
    # pycrdt measures text in UTF-8 bytes.
    return len(text.encode("utf-8", "replace"))


def output_map(output: dict[str, Any]) -> Map:
    """A shared output as jupyter_ydoc builds it (stream text as a ``Text``)."""
    value = dict(output)
    if value.get("output_type") == "stream":
        text = value.get("text", "")
        value["text"] = Text(text if isinstance(text, str) else "".join(text))
    return Map(value)


class _Transactions:
    """Opens transactions on demand; closing one makes its changes visible as one update."""

    def __init__(self, notebook: YNotebook) -> None:
        self._ydoc = notebook.ydoc
        self._open: Transaction | None = None
        self.fresh_tail = False  # the last output was created in the open transaction

    def open(self) -> None:
        if self._open is None:
            self._open = self._ydoc.transaction(origin=ORIGIN)
            self._open.__enter__()

    def close(self) -> None:
        if self._open is not None:
            self._open.__exit__(None, None, None)
            self._open = None
        self.fresh_tail = False


class CellWriter:
    """Buffered output edits of one cell, flushed to the live notebook in batches."""

    def __init__(
        self,
        docs: LiveDocuments,
        room_id: str,
        cell_id: str,
        *,
        interval: float,
        log: logging.Logger,
        on_display: Callable[[str, CellWriter], None] | None = None,
    ) -> None:
        self.room_id = room_id
        self.cell_id = cell_id
        self._docs = docs
        self._interval = interval
        self._log = log
        self._on_display = on_display
        self._ops: list[OutputOp] = []
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._index_hint: int | None = None
        self._reset_tracking()

    def _reset_tracking(self) -> None:
        self._screen: TerminalScreen | None = None
        self._tail_name = ""
        self._tail_bytes = 0
        self._pending_clear = False
        self._display_ids: list[str | None] = []

    # -- buffering -------------------------------------------------------------------

    def push(self, op: OutputOp) -> None:
        """Queue an edit; it is written within ``interval`` seconds."""
        self._ops.append(op)
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._interval, self._flush_soon)

    def _flush_soon(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        task.add_done_callback(self._report_failure)

    def _report_failure(self, task: asyncio.Future[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._log.error("jupyter-loop could not write outputs", exc_info=task.exception())

    def has_display(self, display_id: str) -> bool:
        return display_id in self._display_ids

    async def flush(self, then: CellMutation | None = None) -> None:
        """Write the queued edits now; then apply ``then`` in a transaction of its own."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        async with self._lock:
            ops, self._ops = coalesce(self._ops), []
            if not ops and then is None:
                return
            try:
                notebook = await self._docs.notebook(self.room_id)
                self._index_hint, ycell = find_cell(notebook, self.cell_id, self._index_hint)
            except NotFound as e:  # the cell or its notebook is gone
                self._log.info("Dropping outputs of cell %s: %s", self.cell_id, e.message)
                return
            if ycell.get("cell_type") != "code":
                return
            self._write(notebook, ycell, ops)
            if then is not None:
                with notebook.ydoc.transaction(origin=ORIGIN):
                    then(notebook, ycell)
        await self._docs.save_if_due(self.room_id)

    # -- writing ---------------------------------------------------------------------

    def _write(self, notebook: YNotebook, ycell: Map, ops: list[OutputOp]) -> None:
        outputs = ycell.get("outputs")
        if not isinstance(outputs, Array):
            ycell["outputs"] = outputs = Array()
        self._resync(outputs)
        batch = _Transactions(notebook)
        try:
            for op in ops:
                self._apply(op, outputs, batch)
        finally:
            batch.close()

    def _apply(self, op: OutputOp, outputs: Array, batch: _Transactions) -> None:
        if isinstance(op, AppendStream):
            self._append_stream(op, outputs, batch)
        elif isinstance(op, AppendOutput):
            self._append_output(op, outputs, batch)
        elif isinstance(op, ClearOutputs):
            if op.wait:
                self._pending_clear = True
            else:
                batch.open()
                self._clear(outputs, batch)
        else:
            self._update_display(op, outputs, batch)

    def _append_stream(self, op: AppendStream, outputs: Array, batch: _Transactions) -> None:
        continues_tail = (
            self._screen is not None and self._tail_name == op.name and not self._pending_clear
        )
        if not continues_tail:
            self._new_stream(op, outputs, batch)
            return
        assert self._screen is not None
        self._screen.write(op.text)
        edit = self._screen.take_edit()
        if edit.is_empty:
            return
        # Coalescing guarantees nothing else touched this transaction before a tail
        # edit: a same-name stream before it would have been merged into this one.
        text: Text = outputs[len(outputs) - 1]["text"]
        if edit.removed:
            removed = _utf8_length(edit.removed)
            batch.open()
            del text[self._tail_bytes - removed : self._tail_bytes]
            self._tail_bytes -= removed
            if not batch.fresh_tail:
                batch.close()  # JupyterLab misreads a delete and an insert in one transaction
        if edit.insert:
            batch.open()
            text += edit.insert
            self._tail_bytes += _utf8_length(edit.insert)

    def _new_stream(self, op: AppendStream, outputs: Array, batch: _Transactions) -> None:
        screen = TerminalScreen()
        screen.write(op.text)
        rendered = screen.take_edit().insert
        batch.open()
        if self._pending_clear:
            self._clear(outputs, batch)
        outputs.append(output_map({"output_type": "stream", "name": op.name, "text": rendered}))
        self._display_ids.append(None)
        self._screen, self._tail_name = screen, op.name
        self._tail_bytes = _utf8_length(rendered)
        batch.fresh_tail = True

    def _append_output(self, op: AppendOutput, outputs: Array, batch: _Transactions) -> None:
        batch.open()
        if self._pending_clear:
            self._clear(outputs, batch)
        outputs.append(output_map(op.output))
        self._display_ids.append(op.display_id)
        self._screen, self._tail_name = None, ""
        batch.fresh_tail = False
        if op.display_id and self._on_display is not None:
            self._on_display(op.display_id, self)

    def _clear(self, outputs: Array, batch: _Transactions) -> None:
        if len(outputs):
            outputs.clear()
        self._reset_tracking()
        batch.fresh_tail = False

    def _update_display(self, op: UpdateDisplay, outputs: Array, batch: _Transactions) -> None:
        targets = [i for i, shown in enumerate(self._display_ids) if shown == op.display_id]
        if not targets:
            return
        batch.close()
        first = targets[0]
        rebuilt = []
        for index in range(first, len(outputs)):
            output = outputs[index].to_py()
            if index in targets:
                output["data"], output["metadata"] = op.data, op.metadata
            rebuilt.append(output_map(output))
        batch.open()
        del outputs[first:]
        outputs.extend(rebuilt)
        batch.close()

    def _resync(self, outputs: Array) -> None:
        """Start over from what the document holds if someone else changed the outputs."""
        count = len(outputs)
        if count == len(self._display_ids):
            if self._screen is None:
                return
            tail = outputs[count - 1] if count else None
            text = tail.get("text") if isinstance(tail, Map) else None
            if isinstance(text, Text) and len(text) == self._tail_bytes:
                return
        self._log.debug("Outputs of cell %s changed elsewhere; resynchronising", self.cell_id)
        self._reset_tracking()
        self._display_ids = [None] * count
        tail = outputs[count - 1] if count else None
        if isinstance(tail, Map) and tail.get("output_type") == "stream":
            text = tail.get("text")
            if isinstance(text, Text):
                current = str(text)
                self._screen = TerminalScreen(current)
                self._tail_name = str(tail.get("name", "stdout"))
                self._tail_bytes = _utf8_length(current)

    def reset(self) -> None:
        """Forget what was written: the cell is about to run again (outputs cleared)."""
        self._ops.clear()
        self._reset_tracking()
