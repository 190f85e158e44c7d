"""What a tab changed in the cells while it was offline, read from what it sends back.

A tab that comes back sends the updates the room lacks: the edits it made offline (and,
when the room was not loaded yet as it asked, everything it holds). Applied to the
notebook as it was when the tab lost touch (``before``), they give the notebook the person
saw in that tab; what differs from ``before`` is what they changed there. A pure reading
of two updates: nothing here touches a live room.

Guarded by ``tests/document/test_offline_tab_after_checkout.py`` and the example below.

Example: a line typed offline in c0.
    >>> from pycrdt import Doc
    >>> from jupyter_ydoc import YNotebook
    >>> room = YNotebook()
    >>> room.append_cell({"id": "c0", "cell_type": "code", "source": "x = 1", "metadata": {}})
    >>> before = room.ydoc.get_update()
    >>> tab = YNotebook(Doc())
    >>> tab.ydoc.apply_update(before)
    >>> text = tab.ycells[0]["source"]
    >>> text += "\\n# offline"
    >>> (edit,) = offline_edits(before, tab.ydoc.get_update(room.ydoc.get_state()))
    >>> edit.kind, edit.cell_id, edit.source
    ('modify', 'c0', 'x = 1\\n# offline')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from jupyter_ydoc import YNotebook
from pycrdt import Doc

from ..one_pass import cell_contents


@dataclass(frozen=True)
class HeldCell:
    """A cell as a notebook holds it: its id, place, source and whole content."""

    cell_id: str
    index: int
    source: str
    content: dict[str, Any]


@dataclass(frozen=True)
class OfflineEdit:
    """One change a tab made offline: a cell's new source (``modify``), a cell it added
    (``insert``, placed ``after`` a cell, or first) or one it deleted (``delete``)."""

    kind: Literal["modify", "insert", "delete"]
    cell_id: str
    source: str | None
    cell_type: str
    after: str | None = None


def held_cells(notebook: YNotebook) -> tuple[HeldCell, ...]:
    """The notebook's cells, in order (a cell without an id is left out: nothing can
    point at it)."""
    found = []
    # One pass (``for ycell in notebook.ycells`` reads the cells one by one: O(N²)).
    for index, content in enumerate(cell_contents(notebook.ycells)):
        cell_id = content.get("id")
        if isinstance(cell_id, str):
            source = content.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            found.append(HeldCell(cell_id, index, text, content))
    return tuple(found)


def cells_of(update: bytes, *more: bytes) -> tuple[HeldCell, ...]:
    """The cells of the notebook that ``update`` (then each of ``more``) builds."""
    doc: Doc[Any] = Doc()
    for part in (update, *more):
        doc.apply_update(part)
    return held_cells(YNotebook(doc))


def offline_edits(before: bytes, update: bytes) -> tuple[OfflineEdit, ...]:
    """The changes ``update`` makes to the notebook of ``before``, cell by cell, in the
    order of the tab's notebook (deletions last)."""
    old = {cell.cell_id: cell for cell in cells_of(before)}
    new = cells_of(before, update)
    edits: list[OfflineEdit] = []
    previous: str | None = None
    for cell in new:
        kind = str(cell.content.get("cell_type", "code"))
        was = old.get(cell.cell_id)
        if was is None:
            edits.append(OfflineEdit("insert", cell.cell_id, cell.source, kind, previous))
        elif was.source != cell.source:
            edits.append(OfflineEdit("modify", cell.cell_id, cell.source, kind))
        previous = cell.cell_id
    kept = {cell.cell_id for cell in new}
    for cell in old.values():
        if cell.cell_id not in kept:
            kind = str(cell.content.get("cell_type", "code"))
            edits.append(OfflineEdit("delete", cell.cell_id, None, kind))
    return tuple(edits)
