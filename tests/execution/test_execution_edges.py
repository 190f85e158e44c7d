"""Edges of real use: a failing kernel client, cells run again, odd cell ids, slow kernels."""

from __future__ import annotations

import asyncio
import doctest
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

from jupyter_loop.document import set_source
from jupyter_loop.execution.cell_marks import failure_note

# IPython counts the next run while this one executes.
PRINTS_ITS_COUNT = (
    "import sys\n"
    "print(get_ipython().execution_count - 1, flush=True)\n"
    "print('err', file=sys.stderr, flush=True)"
)


@pytest.fixture
def kernel_managers() -> str | None:
    """``ServerApp.kernel_manager_class`` of the test server (None: Jupyter's own)."""
    return None


@pytest.fixture
def jp_server_config(jp_server_config: Config, kernel_managers: str | None, tmp_path: Path):
    if kernel_managers is not None:
        jp_server_config.ServerApp.kernel_manager_class = kernel_managers
        jp_server_config.GatedKernel.gate = str(tmp_path / "gate")
    return jp_server_config


def settled(tab: Any, *cell_ids: str) -> bool:
    markers = [tab.marker(cell_id) or {} for cell_id in cell_ids]
    return all(marker.get("state") == "done" for marker in markers)


@pytest.mark.parametrize(
    ("kernel_managers", "words"),
    [
        (
            "kernel_managers.BrokenClientKernels",
            "connecting to the kernel: TypeError: start_channels() is broken",
        ),
        (
            "kernel_managers.BrokenExecuteKernels",
            "running this cell: TypeError: execute() is broken",
        ),
    ],
)
async def test_an_unexpected_error_ends_the_run_with_a_message(
    notebook_in_tab, run_cells, api, words
):
    sources = ("print('never')", "print('never either')")
    async with notebook_in_tab("broken.ipynb", *sources) as (path, tab):
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: settled(tab, "c0", "c1"))
        first = tab.cell("c0")
        assert first["execution_state"] == "idle"
        assert tab.marker("c0")["status"] == "error"
        assert words in tab.text("c0")
        assert words in tab.marker("c0")["note"]
        assert tab.marker("c1")["status"] == "aborted"
        assert tab.cell("c1")["execution_state"] == "idle"
    assert (await api("api", "jupyter-loop", "runs", params={"path": path}))["cells"] == []


async def test_a_cell_run_three_times_keeps_its_last_run_only(notebook_in_tab, run_cells):
    async with notebook_in_tab("again.ipynb", PRINTS_ITS_COUNT) as (path, tab):
        tickets = [await run_cells(path, "c0") for _ in range(3)]
        last = tickets[-1]["cells"][0]["run_id"]
        await wait_for(
            lambda: (tab.marker("c0") or {}).get("run_id") == last and settled(tab, "c0")
        )
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 3)
        cell = tab.cell("c0")
        assert [(o["name"], o["text"]) for o in cell["outputs"]] == [
            ("stdout", "3\n"),
            ("stderr", "err\n"),
        ]


async def test_fifty_concurrent_runs_leave_each_cell_its_last_run(notebook_in_tab, run_cells, api):
    cells = [f"c{index}" for index in range(5)]
    async with notebook_in_tab("fifty.ipynb", *[PRINTS_ITS_COUNT] * len(cells)) as (path, tab):
        await asyncio.gather(*(run_cells(path, cells[i % len(cells)]) for i in range(50)))

        async def nothing_pending() -> bool:
            listed = await api("api", "jupyter-loop", "runs", params={"path": path})
            return not listed["cells"]

        while not await nothing_pending():
            await asyncio.sleep(0.1)
        await wait_for(lambda: settled(tab, *cells))
        counts = []
        for cell_id in cells:
            cell = tab.cell(cell_id)
            count = int(cell.get("execution_count") or 0)
            assert [(o["name"], o["text"]) for o in cell["outputs"]] == [
                ("stdout", f"{count}\n"),
                ("stderr", "err\n"),
            ], cell_id
            counts.append(count)
        # Fifty runs in all, the last one among them; which cell ran last is up to arrival.
        assert len(set(counts)) == len(cells) and max(counts) == 50


def notebook_with_ids(root: Path, name: str, ids: list[str]) -> str:
    nb = nbformat.v4.new_notebook()
    for cell_id in ids:
        cell = nbformat.v4.new_code_cell(f"print({cell_id!r})")
        cell["id"] = cell_id
        nb.cells.append(cell)
    (root / name).write_text(nbformat.writes(nb), encoding="utf-8")
    return name


async def test_a_cell_run_while_a_restarted_kernel_is_reconnected_runs(
    write_notebook, start_kernel, run_cells, open_tab
):
    # The kernel dies; the cell run again the moment its marker says "aborted" (before the
    # restarter brings the kernel back, on new ports: it died young) must run on the
    # restarted kernel: not be cut off by the restart's later words, nor wait for ever
    # on the old ports.
    dies = "import os, time\nprint('bye', flush=True)\ntime.sleep(0.5)\nos._exit(1)"
    path = write_notebook("death.ipynb", dies, "'back'")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: (tab.marker("c1") or {}).get("status") == "aborted", timeout=60)
        await run_cells(path, "c1")
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 1, timeout=30)
        assert tab.marker("c1")["status"] == "ok"


async def test_every_valid_cell_id_runs(jp_root_dir, read_notebook, start_kernel, run_cells):
    ids = ["_private", "-dash", "a" * 64, "A-_9"]
    path = notebook_with_ids(jp_root_dir, "ids.ipynb", ids)
    await start_kernel(path)
    await run_cells(path, *ids)

    def all_ran() -> bool:
        notebook = read_notebook(path)
        return bool(notebook) and all(cell.get("execution_count") for cell in notebook.cells)

    await wait_for(all_ran)
    notebook = read_notebook(path)
    assert [cell.outputs[0]["text"] for cell in notebook.cells] == [f"{i}\n" for i in ids]


@pytest.mark.parametrize("cell_id", ["a" * 65, "a b", "a.b", "ü"])
async def test_an_invalid_cell_id_is_refused(write_notebook, start_kernel, run_cells, cell_id):
    path = write_notebook("bad-ids.ipynb", "1")
    await start_kernel(path)
    with pytest.raises(HTTPClientError) as refused:
        await run_cells(path, cell_id)
    assert refused.value.code == 400
    assert "cell id" in json.loads(refused.value.response.body)["message"]


@pytest.mark.parametrize("kernel_managers", ["kernel_managers.GatedKernels"])
async def test_a_cell_waiting_for_its_kernel_is_listed(
    write_notebook, start_kernel, run_cells, api, tmp_path, read_notebook
):
    path = write_notebook("slow.ipynb", "print('started')")
    kernel_id = await start_kernel(path)
    try:
        ticket = await run_cells(path, "c0")
        listed = await api("api", "jupyter-loop", "runs", params={"path": path})
    finally:
        (tmp_path / "gate").touch()  # a kernel left starting would hold up the teardown
    run_id = ticket["cells"][0]["run_id"]
    assert listed["cells"] == [{"cell_id": "c0", "run_id": run_id, "kernel_id": kernel_id}]
    cell = await wait_for(
        lambda: (nb := read_notebook(path)) and nb.cells[0].get("execution_count") and nb.cells[0]
    )
    assert cell.outputs[0]["text"] == "started\n"


def test_failure_notes_say_what_failed():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(failure_note):
        runner.run(test)
    assert runner.failures == 0 and runner.tries == 2


async def test_a_run_waits_for_the_keystrokes_its_tab_sent_before_it(
    write_notebook: Any, start_kernel: Any, open_tab: Any, api: Any
) -> None:
    """Shift-Enter right after typing: the run request (its own socket) can reach the
    server before the room applies the last keystrokes. The tab says what it shows; the
    server runs that once the notebook holds it, not the code before the keystrokes."""
    path = write_notebook("typed.ipynb", "print('before typing')")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 1)
        kept = tab.notebook
    # The keystrokes are held (the tab is away) while its request goes out.
    set_source(kept.ycells[0], "print('as typed')")
    body = {"path": path, "cell_ids": ["c0"], "sources": {"c0": "print('as typed')"}}
    request = asyncio.ensure_future(api("api", "jupyter-loop", "runs", method="POST", body=body))
    await asyncio.sleep(0.5)
    async with open_tab(path, notebook=kept) as back:
        await request
        await wait_for(lambda: back.cell("c0").get("execution_count"))
        assert back.text("c0") == "as typed\n"


async def test_sources_that_never_come_run_what_the_notebook_holds(
    write_notebook: Any, start_kernel: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("other.ipynb", "print('in the notebook')")
    await start_kernel(path)
    async with open_tab(path) as tab:
        body = {"path": path, "cell_ids": ["c0"], "sources": {"c0": "print('never sent')"}}
        await api("api", "jupyter-loop", "runs", method="POST", body=body)
        await wait_for(lambda: tab.cell("c0").get("execution_count"))
        assert tab.text("c0") == "in the notebook\n"
        with pytest.raises(HTTPClientError) as refused:
            bad = {"path": path, "cell_ids": ["c0"], "sources": {"c9": "x"}}
            await api("api", "jupyter-loop", "runs", method="POST", body=bad)
        assert refused.value.code == 400
