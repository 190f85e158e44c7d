"""Run All at the kernel's pace: the next cell is handed over as the one before ends.

What a user relies on stays true on that path: each cell gets its own outputs and count,
a queued cell's edits count until it is handed to the kernel, an approved run never runs
a source edited since, an error stops the rest, a restart mid-queue leaves nothing running.
"""

from __future__ import annotations

from typing import Any

from conftest import wait_for
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
    write_notebook, read_notebook, start_kernel, run_cells, open_tab
):
    cells = [f"print('cell {i}')\n{i} * 10" for i in range(40)]
    path = write_notebook("many.ipynb", *cells)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
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


async def test_a_queued_cell_runs_the_source_it_has_when_handed_over(
    write_notebook, start_kernel, run_cells, open_tab
):
    path = write_notebook("edited.ipynb", SLOW, "print('as queued')")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: tab.marker("c0") and tab.marker("c0")["state"] == "running")
        edit_source(tab, "c1", "print('as edited while queued')")
        await wait_for(lambda: done(tab, "c1"))
        assert tab.text("c1") == "as edited while queued\n"
        assert tab.marker("c1")["status"] == "ok"


async def test_an_approved_run_does_not_run_a_source_edited_while_queued(
    write_notebook, start_kernel, run_cells, open_tab
):
    approved = "print('approved')"
    path = write_notebook("approved.ipynb", SLOW, approved, "print('after')")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
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


async def test_a_cell_emptied_while_queued_is_skipped(
    write_notebook, start_kernel, run_cells, open_tab
):
    path = write_notebook("skipped.ipynb", SLOW, "print('emptied')", "print('last')")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
        await run_cells(path, "c0", "c1", "c2")
        await wait_for(lambda: tab.marker("c0") and tab.marker("c0")["state"] == "running")
        edit_source(tab, "c1", "   ")
        await wait_for(lambda: done(tab, "c2"))
        assert tab.text("c1") == ""
        assert tab.cell("c1").get("execution_count") is None
        assert tab.text("c2") == "last\n"
        assert [tab.cell(c)["execution_state"] for c in ("c0", "c1", "c2")] == ["idle"] * 3
