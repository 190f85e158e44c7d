"""When a run's end reaches the ``.ipynb`` (``document/room_saves.py``): once the runs
pause, not while a user steps through cells with Shift-Enter (each save then met the next
run on its way), and no later than ``LATEST`` seconds while runs keep ending."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import wait_for
from traitlets.config import Config

from jupyter_loop.document.room_saves import LATEST, QUIET

STEP_PAUSE = 0.2  # seconds a user stepping through cells looks at each result
HANG_GUARD = 12 * LATEST  # seconds; no speed claim: a save that should come, waited for


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"save_interval": 3600}  # no save while a cell prints: only the runs' ends save


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.YDocExtension.document_save_delay = 3600  # nor the room's own autosave
    return jp_server_config


@asynccontextmanager
async def counting_rewrites(target: Path) -> AsyncIterator[list[int]]:
    """Count how often ``target`` is written (a save renames a new file into place, so a
    new inode or time) while the block runs; the count is the list's one item."""
    count = [0]

    def stamp() -> tuple[int, int]:
        stat = os.stat(target)
        return stat.st_ino, stat.st_mtime_ns

    async def watch() -> None:
        last = stamp()
        while True:
            await asyncio.sleep(0.01)
            now = stamp()
            if now != last:
                count[0] += 1
                last = now

    watcher = asyncio.ensure_future(watch())
    try:
        yield count
    finally:
        watcher.cancel()
        with suppress(asyncio.CancelledError):
            await watcher


async def step(tab: Any, run_cells: Any, path: str, times: int, start: int = 1) -> None:
    """Run ``c0`` ``times`` times, each once the last one's count shows, then a short look."""
    for count in range(start, start + times):
        await run_cells(path, "c0")
        await wait_for(lambda count=count: tab.cell("c0").get("execution_count") == count)
        await asyncio.sleep(STEP_PAUSE)


def count_on_disk(read_notebook: Any, path: str) -> int | None:
    notebook = read_notebook(path)
    return notebook.cells[0].get("execution_count") if notebook else None


@pytest.mark.timeout(60)
async def test_stepping_through_cells_saves_once_the_steps_pause(
    notebook_in_tab: Any,
    run_cells: Any,
    read_notebook: Any,
    jp_root_dir: Path,
) -> None:
    steps = 8
    async with notebook_in_tab("steps.ipynb", "print('step')") as (path, tab):
        async with counting_rewrites(jp_root_dir / path) as rewrites:
            await step(tab, run_cells, path, steps)
            while_stepping = rewrites[0]
            # Saved once the steps pause: within a second or so, not at the next run.
            await wait_for(lambda: count_on_disk(read_notebook, path) == steps, QUIET + 10)
    # Eight runs ending a few tenths of a second apart: half a second after each end, as
    # before, wrote the file three to five times on the way. One is allowed: a step slower
    # than QUIET on a loaded machine is a pause.
    assert while_stepping <= 1, f"the file was written {while_stepping} times while stepping"


@pytest.mark.timeout(120)
async def test_runs_that_keep_ending_are_saved_every_few_seconds(
    notebook_in_tab: Any, run_cells: Any, jp_root_dir: Path
) -> None:
    """Runs keep ending (one a few tenths of a second after the other): the file is
    written while they go on, not only once they pause (at most ``LATEST`` seconds after
    the first end not saved). The test steps until the file is written, an event: a fixed
    window of ``LATEST + 2`` seconds failed at load 10, where the first run alone took
    seconds. ``HANG_GUARD`` only keeps a product that never saves from hanging the test."""
    async with notebook_in_tab("busy.ipynb", "print('step')") as (path, tab):
        loop = asyncio.get_running_loop()
        async with counting_rewrites(jp_root_dir / path) as rewrites:
            began, count = loop.time(), 0
            while rewrites[0] == 0:
                elapsed = loop.time() - began
                assert elapsed < HANG_GUARD, f"no save in {count} runs ending over {elapsed:.1f} s"
                count += 1
                await step(tab, run_cells, path, 1, start=count)
