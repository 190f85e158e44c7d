"""Run All at the kernel's pace: the next cell is handed over as the one before ends.

What a user relies on stays true on that path: each cell gets its own outputs and count,
a queued cell's edits count until it is handed to the kernel, an approved run never runs
a source edited since, an error stops the rest, a restart mid-queue leaves nothing running.
"""

from __future__ import annotations

from typing import Any

from loop_helpers import wait_for
from pycrdt import Text

from jupyter_loop.document import find_cell, source_hash

SLOW = "import time\ntime.sleep(1.5)\nprint('first', flush=True)"


def done(tab: Any, cell_id: str) -> bool:
    return (tab.marker(cell_id) or {}).get("state") == "done"


def edit_source(tab: Any, cell_id: str, source: str) -> None:
    """Replace a cell's source in the tab, as typing does (synced to the server)."""
    _, ycell = find_cell(tab.notebook, cell_id)
    text: Text = ycell["source"]
    with tab.notebook.ydoc.transaction():
        del text[0 : len(text)]
        text += source


async def test_each_cell_of_a_run_all_gets_its_own_outputs_and_count(
    notebook_in_tab, read_notebook, run_cells
):
    cells = [f"print('cell {i}')\n{i} * 10" for i in range(40)]
    async with notebook_in_tab("many.ipynb", *cells) as (path, tab):
        await run_cells(path, *(f"c{i}" for i in range(40)))
        await wait_for(lambda: done(tab, "c39"))
        for i in range(40):
            cell = tab.cell(f"c{i}")
            assert tab.text(f"c{i}") == f"cell {i}\n"
            assert cell["outputs"][-1]["data"]["text/plain"] == str(i * 10)
            assert cell["execution_count"] == i + 1
            assert tab.marker(f"c{i}")["status"] == "ok"

    def saved() -> Any:
        notebook = read_notebook(path)
        return notebook if notebook and notebook.cells[-1].get("execution_count") else None

    on_disk = await wait_for(saved)
    assert [cell.execution_count for cell in on_disk.cells] == list(range(1, 41))


async def test_a_queued_cell_runs_the_source_it_has_when_handed_over(notebook_in_tab, run_cells):
    async with notebook_in_tab("edited.ipynb", SLOW, "print('as queued')") as (path, tab):
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: tab.marker("c0") and tab.marker("c0")["state"] == "running")
        edit_source(tab, "c1", "print('as edited while queued')")
        await wait_for(lambda: done(tab, "c1"))
        assert tab.text("c1") == "as edited while queued\n"
        assert tab.marker("c1")["status"] == "ok"


async def test_an_approved_run_does_not_run_a_source_edited_while_queued(
    notebook_in_tab, run_cells
):
    approved = "print('approved')"
    async with notebook_in_tab("approved.ipynb", SLOW, approved, "print('after')") as (path, tab):
        hashes = {"c0": source_hash(SLOW), "c1": source_hash(approved)}
        await run_cells(path, "c0", "c1", "c2", source_hashes=hashes)
        await wait_for(lambda: tab.marker("c0") and tab.marker("c0")["state"] == "running")
        edit_source(tab, "c1", "print('never approved')")
        await wait_for(lambda: done(tab, "c2"))
        assert "never approved" not in tab.text("c1")
        assert "source changed after the run was approved" in tab.text("c1")
        assert tab.marker("c1")["status"] == "error"
        assert tab.marker("c2")["status"] == "aborted"
        assert tab.text("c2") == ""


async def test_a_cell_emptied_while_queued_is_skipped(notebook_in_tab, run_cells):
    sources = (SLOW, "print('emptied')", "print('last')")
    async with notebook_in_tab("skipped.ipynb", *sources) as (path, tab):
        await run_cells(path, "c0", "c1", "c2")
        await wait_for(lambda: tab.marker("c0") and tab.marker("c0")["state"] == "running")
        edit_source(tab, "c1", "   ")
        await wait_for(lambda: done(tab, "c2"))
        assert tab.text("c1") == ""
        assert tab.cell("c1").get("execution_count") is None
        assert tab.text("c2") == "last\n"
        assert [tab.cell(c)["execution_state"] for c in ("c0", "c1", "c2")] == ["idle"] * 3
