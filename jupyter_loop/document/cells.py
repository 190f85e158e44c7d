"""Finding cells of a live notebook by id."""

from __future__ import annotations

from jupyter_ydoc import YNotebook
from pycrdt import Map

from ..errors import NotFound


class CellNotFound(NotFound):
    pass


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
    for index, ycell in enumerate(cells):
        if ycell.get("id") == cell_id:
            return index, ycell
    raise CellNotFound(f"No cell with id '{cell_id}' in this notebook.")


def code_cell(notebook: YNotebook, cell_id: str) -> Map | None:
    """The cell if it still exists and is a code cell; ``None`` otherwise."""
    try:
        _, ycell = find_cell(notebook, cell_id)
    except CellNotFound:
        return None
    return ycell if ycell.get("cell_type") == "code" else None
