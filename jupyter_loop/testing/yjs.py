"""What a browser tab can read of a notebook's Y updates, and whether pycrdt agrees.

A tab holds the notebook in Yjs; the server holds it in pycrdt (yrs), another
implementation of the same format. An update yrs integrates can leave Yjs waiting for
structs it never gets (pending), and whatever hangs on them (a cell's count, outputs,
run marks) never shows in the tab. So a test of what the server stores or sends reads it
with Yjs too, through ``yjs_read.cjs`` and node, rather than trusting pycrdt's reading.

Example:
    >>> from pycrdt import Doc, Array, Map
    >>> doc = Doc()
    >>> cells = doc.get("cells", type=Array)
    >>> cells.append(Map({"id": "a", "source": "1+1"}))
    >>> seen = read_with_yjs({"nb": [doc.get_update()]})["nb"]
    >>> seen.pending, seen.cells
    ([], [{'id': 'a', 'source': '1+1'}])
    >>> disagreements(doc, seen)
    []
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pycrdt import Array, Doc, Map

READER = Path(__file__).with_name("yjs_read.cjs")
ROOTS = (("cells", Array), ("meta", Map), ("state", Map))


@dataclass(frozen=True)
class YjsView:
    """A document as Yjs sees it after applying its updates in order."""

    pending: list[list[int]]
    """``[client, clock]`` of structs Yjs waits for: items it holds back, unseen."""
    pending_deletes: bool
    cells: list[Any]
    meta: dict[str, Any]
    state: dict[str, Any]
    texts: dict[str, str]
    """The roots asked for as ``texts``, read as ``Y.Text``."""
    positions: list[list[int] | None] = field(default_factory=list)
    """The relative positions asked for, resolved as a cell editor resolves a
    collaborator's caret: ``[cell index, index in its source]``, ``None`` if in no cell."""

    @property
    def whole(self) -> bool:
        return not self.pending and not self.pending_deletes


def read_with_yjs(
    docs: Mapping[str, Iterable[bytes]],
    texts: Iterable[str] = (),
    timeout: float = 60,
    positions: Mapping[str, list[dict[str, Any]]] | None = None,
) -> dict[str, YjsView]:
    """Apply each document's updates, in order, to a fresh Yjs document; read its notebook
    roots and the ``texts`` roots."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is needed to read updates with Yjs")
    payload = {
        "docs": {
            name: [base64.b64encode(update).decode() for update in updates]
            for name, updates in docs.items()
        },
        "texts": list(texts),
        "positions": dict(positions or {}),
    }
    env = dict(os.environ)
    done = subprocess.run(
        [node, str(READER)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"yjs_read.cjs failed: {done.stderr.strip()}")
    return {name: YjsView(**view) for name, view in json.loads(done.stdout).items()}


def pycrdt_roots(doc: Doc) -> dict[str, Any]:
    """The notebook's roots as pycrdt reads them, in the shape ``YjsView`` has."""
    return {name: doc.get(name, type=kind).to_py() or kind_default(kind) for name, kind in ROOTS}


def kind_default(kind: type) -> Any:
    return [] if kind is Array else {}


def disagreements(doc: Doc, seen: YjsView) -> list[str]:
    """What keeps a tab from seeing the document pycrdt has: empty when they agree.

    Numbers are compared as JSON numbers (Yjs has no integers: ``1`` and ``1.0`` agree).
    """
    problems: list[str] = []
    if seen.pending:
        problems.append(f"Yjs holds back structs waiting for {seen.pending}")
    if seen.pending_deletes:
        problems.append("Yjs holds back deletions it cannot place")
    ours = pycrdt_roots(doc)
    for name, _ in ROOTS:
        difference = first_difference(normalized(ours[name]), normalized(getattr(seen, name)))
        if difference is not None:
            problems.append(f"{name}{difference}")
    return problems


def first_difference(ours: Any, theirs: Any, where: str = "") -> str | None:
    """Where two JSON values first differ, and how (pycrdt's value first).

    >>> first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]})
    "['a'][1]['b']: pycrdt 2 != Yjs 3"
    >>> first_difference([1], [1, 2])
    ': pycrdt 1 items != Yjs 2 items'
    """
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(set(ours) | set(theirs), key=str):
            if key not in ours or key not in theirs:
                side = "Yjs" if key in theirs else "pycrdt"
                return f"{where}[{key!r}]: only {side} has it"
            found = first_difference(ours[key], theirs[key], f"{where}[{key!r}]")
            if found is not None:
                return found
        return None
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return f"{where}: pycrdt {len(ours)} items != Yjs {len(theirs)} items"
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            found = first_difference(mine, other, f"{where}[{index}]")
            if found is not None:
                return found
        return None
    if ours != theirs:
        return f"{where}: pycrdt {shorten(ours)} != Yjs {shorten(theirs)}"
    return None


def normalized(value: Any) -> Any:
    """JSON's view of a value: integral floats as ints, as both libraries' readers agree on.

    >>> normalized({"n": 1.0, "xs": [2.5, 3.0]})
    {'n': 1, 'xs': [2.5, 3]}
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: normalized(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalized(item) for item in value]
    return value


def shorten(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
