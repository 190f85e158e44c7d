"""A notebook's file replaced on disk (a ``git checkout``) while one of its cells runs.

jupyter-collaboration notices the change at its next poll and reloads the room from the
file: the running cell gets the file's source and the file's outputs. The file wins for
sources; the run in flight owns its cell's outputs (it goes on printing into the cell with
the same id), so the cell ends with that run's lines, whole and in order: never the file's
old outputs with the run's lines after them, never only the lines printed after the reload.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json, replace_on_disk, wait_for
from traitlets.config import Config

from jupyter_loop.document import collaboration
from jupyter_loop.document.reference import NotebookRef
from jupyter_loop.testing.yjs import disagreements, read_with_yjs

LINES = 40
SLOW = f"import time\nfor i in range({LINES}):\n    print(i, flush=True)\n    time.sleep(0.05)"


def check_out(target: Path, code: str, outputs: list[dict[str, Any]]) -> None:
    """A ``git checkout``: another version of the notebook (``code`` and ``outputs`` in
    its first cell, ``y = 2`` in its second) replaces the file, atomically."""
    other = json.loads(notebook_json(code, "y = 2"))
    other["cells"][0]["outputs"] = outputs
    replace_on_disk(target, json.dumps(other))


def printed(outputs: list[Any]) -> list[str]:
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    return text.splitlines()


@pytest.fixture(params=[0.0, 0.5], ids=["file-read-at-once", "file-read-slowly"])
def jp_server_config(request: Any, jp_server_config: Config) -> Config:
    # A slow read of the file puts the reload well after jupyter-collaboration says it
    # comes (its event is sent before it reads the file): batches written in between must
    # not take the reload for over.
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.read_delay = request.param
    # The room's own autosave can find the change and lose its reload to a cancellation
    # (jupyter-collaboration's, docs/upstream/cancelled-reload.md); jupyter-loop's saves
    # let the watcher reload first. This test is about the run's outputs: only ours save.
    jp_server_config.YDocExtension.document_save_delay = 3600
    return jp_server_config


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    "file_outputs",
    [
        pytest.param([], id="file-without-outputs"),
        pytest.param(
            [{"output_type": "stream", "name": "stdout", "text": "stale 1\nstale 2\n"}],
            id="file-with-old-outputs",
        ),
    ],
)
async def test_a_run_in_flight_keeps_all_its_lines_when_the_file_is_replaced(
    jp_root_dir: Path,
    start_kernel: Any,
    run_cells: Any,
    read_notebook: Any,
    open_tab: Any,
    file_outputs: list[dict[str, Any]],
):
    path = "checkout.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json(SLOW, "y = 1"), encoding="utf-8")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        lines = lambda: tab.text("c0").splitlines()  # noqa: E731
        await wait_for(lambda: len(lines()) >= 8)

        check_out(target, SLOW + "\n# checked out", file_outputs)

        await wait_for(lambda: tab.cell("c1")["source"] == "y = 2", timeout=20)
        assert tab.cell("c0")["source"].endswith("# checked out")  # the file wins for code
        await wait_for(lambda: tab.cell("c0")["execution_count"], timeout=30)
        # the run's end and its last lines are one update: the count comes with them
        assert lines() == [str(i) for i in range(LINES)]
        # and the browser's library reads the rewritten cell as pycrdt does, nothing held back
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert disagreements(tab.notebook.ydoc, seen) == []

    saved = await wait_for(
        lambda: (nb := read_notebook(path)) and nb.cells[0].execution_count and nb, timeout=20
    )
    assert printed(saved.cells[0].outputs) == [str(i) for i in range(LINES)]
    assert saved.cells[1].source == "y = 2"


PAUSING = (
    "import os, time\n"
    "for i in range(8):\n"
    "    print(i, flush=True)\n"
    "while not os.path.exists('go'):\n"
    "    time.sleep(0.05)\n"
    f"for i in range(8, {LINES}):\n"
    "    print(i, flush=True)"
)


@pytest.mark.timeout(90)
async def test_a_reloaded_cell_of_the_very_size_written_is_still_written_over(
    jp_root_dir: Path, start_kernel: Any, run_cells: Any, open_tab: Any
):
    # CI: the file's outputs ("stale 1\nstale 2\n") had the very byte length of the lines
    # printed by then ("0\n" … "7\n"), so the cell looked as written and kept them.
    path = "same-size.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json(PAUSING, "y = 1"), encoding="utf-8")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        lines = lambda: tab.text("c0").splitlines()  # noqa: E731
        await wait_for(lambda: lines() == [str(i) for i in range(8)])
        stale = "stale 1\nstale 2\n"
        assert len(stale) == len("".join(f"{i}\n" for i in range(8)))
        check_out(target, PAUSING, [{"output_type": "stream", "name": "stdout", "text": stale}])
        await wait_for(lambda: tab.cell("c1")["source"] == "y = 2", timeout=20)
        await asyncio.sleep(4)  # the run stays quiet past the time a reload may take
        (jp_root_dir / "go").touch()
        await wait_for(lambda: tab.cell("c0")["execution_count"], timeout=30)
        assert lines() == [str(i) for i in range(LINES)]


ENDS_ON_GO = (
    "import os, time\n"
    "for i in range(20):\n"
    "    print(i, flush=True)\n"
    "while not os.path.exists('go'):\n"
    "    time.sleep(0.01)\n"
    "print('end')"
)
CHECKED_OUT_CELLS = 4000
"""Cells of the checkout: its reload takes seconds (a turn of the loop per cell), the run's
end a few hundredths of one; the test checks the end did come while it was set."""
HANG_GUARD = 90.0  # seconds; no speed claim: a wait for an event that should come


@pytest.mark.timeout(240)  # a hang guard: 33-52 s at load 12 on 2 cores
async def test_a_run_ending_while_a_long_reload_sets_the_notebook_ends_whole(
    jp_root_dir: Path, jp_serverapp: Any, start_kernel: Any, run_cells: Any, open_tab: Any
):
    """jupyter_ydoc sets a reloaded notebook in one transaction held open across its
    awaits (a turn of the loop per cell): the run's end, written meanwhile, was refused by
    pycrdt (a nested transaction of another origin) and never written. The cell stayed
    ``[*]`` in every tab, its marker "running" (chaos seed 2033, trial 205)."""
    path = "long-reload.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json(ENDS_ON_GO, "y = 1"), encoding="utf-8")
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: len(tab.text("c0").splitlines()) == 20)
        reloading = collaboration.update_lock(room_of(jp_serverapp, path)).locked
        cells = (f"z = {i}" for i in range(CHECKED_OUT_CELLS))
        many = json.loads(notebook_json(ENDS_ON_GO, "y = 2", *cells))
        replace_on_disk(target, json.dumps(many))
        await wait_for(reloading, timeout=20, interval=0.001)
        (jp_root_dir / "go").touch()  # the run ends while the room sets the checkout
        # The kernel says it is idle (jupyter_server hears its status, not our document):
        # the run's end reached the server. The room must still be setting the checkout,
        # else this test tried nothing (the checkout was too small for this machine).
        kernel = jp_serverapp.kernel_manager.get_kernel(kernel_id)
        await wait_for(lambda: kernel.execution_state == "idle" or not reloading(), 30, 0.001)
        assert reloading(), "the reload ended before the run did: make the checkout bigger"
        # Then the waits are for events, not for a time: the reload over, its cells in the
        # tab (one update, sent once the room set them all), the run's end after them.
        await wait_for(lambda: not reloading(), timeout=HANG_GUARD)
        await wait_for(lambda: len(tab.notebook.ycells) == CHECKED_OUT_CELLS + 2, HANG_GUARD)
        await wait_for(lambda: tab.cell("c0")["execution_count"], timeout=HANG_GUARD)
        assert (tab.marker("c0") or {}).get("state") == "done"
        assert tab.cell("c0")["execution_state"] == "idle"
        assert tab.text("c0").splitlines() == [*(str(i) for i in range(20)), "end"]
        # and the browser's library reads what was written after the reload as pycrdt does
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert disagreements(tab.notebook.ydoc, seen) == []


def room_of(serverapp: Any, path: str) -> Any:
    """The notebook's room in the test's server (its update lock says when it reloads)."""
    settings = serverapp.web_app.settings
    file_id = settings["file_id_manager"].get_id(path)
    extension = collaboration.extension(settings)
    return collaboration.rooms(extension)[NotebookRef(path, str(file_id)).room_id]
