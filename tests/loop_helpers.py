"""Helpers the tests of every folder import: waiting for a condition, notebooks on disk
and in a tab.

They are not in ``conftest.py``: each folder has a ``conftest.py`` of its own, and pytest
imports each as a module named ``conftest``, so ``from conftest import ...`` would get
whichever was imported last.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
from pycrdt import Text


def notebook_json(*sources: str, cell_type: str = "code") -> str:
    """A notebook whose cells have ids ``c0``, ``c1``, ... and the given sources."""
    nb = nbformat.v4.new_notebook()
    for index, source in enumerate(sources):
        make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
        cell = make(source)
        cell["id"] = f"c{index}"
        nb.cells.append(cell)
    return nbformat.writes(nb)


def type_in(tab: Any, cell_id: str, text: str) -> None:
    """Type ``text`` at the end of a cell's source in a tab (a Y client of the room)."""
    for ycell in tab.notebook.ycells:
        if ycell.get("id") == cell_id:
            source = ycell["source"]
            assert isinstance(source, Text)
            source += text


def replace_on_disk(target: Path, text: str) -> None:
    """What a ``git checkout`` does to a file: another version renamed over it."""
    replacement = target.with_name(target.name + ".checkout")
    replacement.write_text(text, encoding="utf-8")
    os.replace(replacement, target)


def source_on_disk(target: Path, index: int) -> str:
    """The source of cell ``index`` as the notebook's file holds it."""
    source = json.loads(target.read_text("utf-8"))["cells"][index]["source"]
    return "".join(source) if isinstance(source, list) else str(source)


async def wait_for(
    predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05
) -> Any:
    """Poll until ``predicate()`` is truthy; return its value or fail after ``timeout``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"Timed out after {timeout} s waiting for {predicate}")
        await asyncio.sleep(interval)
