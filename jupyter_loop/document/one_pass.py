"""A live notebook read whole in one pass, as jupyter_ydoc's ``YNotebook.get`` reads it.

pycrdt reads an element of a shared array by walking the array from its start (``Array[i]``
is yrs's ``get``, O(i)), and its iterator reads each element by index, so ``YNotebook.get``,
``ycells.to_py()`` and ``for ycell in ycells`` cost O(N²) in the number of cells: 6 s at
20,000 cells, some 5 minutes at 100,000, on the event loop (``bench/big_notebook.py``;
``docs/upstream/cells-read-one-by-one.md``). yrs's own ``to_json`` walks the array once,
so the cells are read here as JSON, then given the same touches ``YNotebook._cell_to_py``
gives each cell.

It differs from ``YNotebook.get()`` only where that writes: ``get`` renames a duplicate id
held by a different cell in the document itself; here such a cell keeps its id (exact
duplicates are dropped, as there). Reading never writes.

Example:
    >>> import nbformat
    >>> from jupyter_ydoc import YNotebook
    >>> nb = YNotebook()
    >>> nb.set(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", id="a")]))
    >>> notebook_content(nb) == nb.get()
    True
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_ydoc import YNotebook
from jupyter_ydoc.utils import cast_all
from pycrdt import Array, Map


def cell_contents(cells: Array[Any]) -> list[dict[str, Any]]:
    """Each cell of a live notebook's ``ycells`` as plain data, read in one pass.

    >>> from pycrdt import Doc, Map, Text
    >>> doc = Doc()
    >>> cells = doc.get("cells", type=Array)
    >>> cells.append(Map({"id": "a", "source": Text("1 + 1")}))
    >>> cell_contents(cells) == [{"id": "a", "source": "1 + 1"}]  # a map's keys: any order
    True
    """
    with cells.doc.transaction() as transaction:
        # pycrdt has no public one-pass read of an array (its ``to_py`` iterates by index).
        text = cells.integrated.to_json(transaction._txn)
    found: list[dict[str, Any]] = json.loads(text)
    return found


def notebook_content(notebook: YNotebook) -> dict[str, Any]:
    """The notebook as ``notebook.get()`` gives it (see the module docstring), in one pass."""
    meta = notebook.ydoc.get("meta", type=Map).to_py() or {}  # a map of a few keys
    cast_all(meta, float, int)
    strip_ids = int(meta.get("nbformat", 0)) == 4 and int(meta.get("nbformat_minor", 0)) <= 4
    cells: list[dict[str, Any]] = []
    seen: dict[str, dict[str, Any]] = {}
    for cell in cell_contents(notebook.ycells):
        cell.pop("execution_state", None)
        cast_all(cell, float, int)
        if "id" in cell and strip_ids:
            del cell["id"]
        if "attachments" in cell and cell.get("cell_type") in ("raw", "markdown"):
            if not cell["attachments"]:
                del cell["attachments"]
        cell_id = cell.get("id")
        if cell_id:
            if seen.get(cell_id) == cell:
                continue  # an exact duplicate, dropped as ``get`` drops it
            seen.setdefault(cell_id, cell)
        cells.append(cell)
    return {
        "cells": cells,
        "metadata": meta.get("metadata", {}),
        "nbformat": int(meta.get("nbformat", 0)),
        "nbformat_minor": int(meta.get("nbformat_minor", 0)),
    }
