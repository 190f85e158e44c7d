"""A run's outputs reach the ``.ipynb`` ``save_interval`` seconds into the run, not with
its first output (``RoomSaves.save_if_due`` counts from the run's start too).

Counted from the last save alone, the first output of a run that came after a pause
saved the notebook at once: a trivial cell paid for a whole save between its output
and its end (with ``save_interval`` 0.5, as the benches run, one run in seven of
``bench/execution_overhead.py``), and every cell run after a pause saved twice.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from loop_helpers import wait_for
from traitlets.config import Config

SOURCE = "import time\nprint('first', flush=True)\ntime.sleep(2)\nprint('second')"


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"save_interval": 0.5}


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.YDocExtension.document_save_delay = 3600  # the room's own autosave
    return jp_server_config


@pytest.mark.timeout(120)
async def test_a_runs_first_output_is_not_saved_at_once(
    notebook_in_tab: Any, run_cells: Any, read_notebook: Any, api: Any
) -> None:
    async with notebook_in_tab("paced.ipynb", SOURCE) as (path, tab):
        await run_cells(path, "c0")  # a first run: its end is saved, the last save then
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1, timeout=60)
        await wait_for(lambda: (nb := read_notebook(path)) and nb.cells[0].execution_count == 1)
        await asyncio.sleep(2)  # past save_interval since the last save
        await run_cells(path, "c0")
        await wait_for(lambda: "first" in str(tab.cell("c0").get("outputs")), timeout=60)
        await asyncio.sleep(0.3)  # the run has its first output, not yet 0.5 s in
        assert read_notebook(path).cells[0].outputs[0]["text"] == "first\nsecond\n"
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 2, timeout=60)
    # the run's end is saved all the same
    await wait_for(lambda: read_notebook(path).cells[0].execution_count == 2, timeout=30)
