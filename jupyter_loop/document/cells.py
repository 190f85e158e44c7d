"""Finding cells of a live notebook by id."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map

from ..errors import NotFound
from .one_pass import cell_contents

ONE_PASS_FROM = 200
"""From this many cells, a search reads the cells' ids in one pass (``.one_pass``) and then
the one cell found: pycrdt reads a cell by walking the cells before it, so a search cell by
cell costs O(N²) (minutes at 100,000 cells). Below it, cell by cell costs a few
milliseconds, less than encoding the notebook's outputs that the one pass reads too."""


class CellNotFound(NotFound):
    pass


def _cell_ids(cells: Array[Any]) -> list[Any]:
    return [cell.get("id") for cell in cell_contents(cells)]


def find_cell(notebook: YNotebook, cell_id: str, hint: int | None = None) -> tuple[int, Map]:
    """The index and shared map of the cell with ``cell_id``.

    ``hint`` is where the cell was last time: checked first, since cells rarely move
    while a cell runs and a full scan of a large notebook on every write adds up.
    """
    cells = notebook.ycells
    if hint is not None and 0 <= hint < len(cells):
        candidate = cells[hint]
        if candidate.get("id") == cell_id:
            return hint, candidate
    if len(cells) >= ONE_PASS_FROM:
        ids = _cell_ids(cells)
        if cell_id in ids:
            index = ids.index(cell_id)
            return index, cells[index]
    else:
        for index, ycell in enumerate(cells):
            if ycell.get("id") == cell_id:
                return index, ycell
    raise CellNotFound(f"No cell with id '{cell_id}' in this notebook.")


def find_cells(notebook: YNotebook, cell_ids: Iterable[str]) -> dict[str, tuple[int, Map]]:
    """The index and shared map of each of ``cell_ids`` that the notebook has, in one pass
    (a Run All of n cells looked each up in turn: n² reads of the shared document)."""
    wanted = set(cell_ids)
    found: dict[str, tuple[int, Map]] = {}
    cells = notebook.ycells
    if len(cells) >= ONE_PASS_FROM:
        for index, cell_id in enumerate(_cell_ids(cells)):
            if cell_id in wanted and cell_id not in found:
                found[cell_id] = (index, cells[index])
        return found
    for index, ycell in enumerate(cells):
        cell_id = ycell.get("id")
        if cell_id in wanted:
            found[cell_id] = (index, ycell)
            if len(found) == len(wanted):
                break
    return found


def code_cell(notebook: YNotebook, cell_id: str) -> Map | None:
    """The cell if it still exists and is a code cell; ``None`` otherwise."""
    try:
        _, ycell = find_cell(notebook, cell_id)
    except CellNotFound:
        return None
    return ycell if ycell.get("cell_type") == "code" else None


def set_source(ycell: Map, source: str) -> None:
    """Replace a cell's source, touching only the part that changed.

    Collaborators' cursors outside the change stay where they are. (jupyter_ydoc 4 has
    ``YNotebook.set_cell(source=...)``; jupyter_ydoc 3, on JupyterLab 4.5, does not.)

    The new part goes in *before* the old part is deleted, right after the kept start.
    Deleting first put it after the deleted run instead, where a line a tab appended to
    the old source at the same moment lands too: Y then orders the two by client id, and
    the tab's line could end up inside the new code (chaos seed 2039 trial 754).
    """
    text = ycell["source"]
    old = str(text)
    start = 0
    limit = min(len(old), len(source))
    while start < limit and old[start] == source[start]:
        start += 1
    end_old, end_new = len(old), len(source)
    while end_old > start and end_new > start and old[end_old - 1] == source[end_new - 1]:
        end_old -= 1
        end_new -= 1
    # pycrdt counts text positions in UTF-8 bytes.
    offset = len(old[:start].encode())
    removed = len(old[start:end_old].encode())
    added = source[start:end_new]
    with text.doc.transaction():  # one change for every tab, not an insert then a delete
        if added:
            text.insert(offset, added)
        if removed:
            after_added = offset + len(added.encode())
            del text[after_added : after_added + removed]


def source_hash(source: str) -> str:
    """A hash of a cell's source, to check that what runs is what a user saw.

    >>> source_hash("1 + 1")[:12]
    '72fce59447a0'
    """
    return hashlib.sha256(source.encode()).hexdigest()
