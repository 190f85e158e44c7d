"""A cell whose end the document shows is no longer "running or queued" to anyone who asks.

A run's end is written (the count, the done marker, the last outputs) and then its
writing may go on, waiting for a save the end asked for. The tab shows the cell done all
that time; ``GET runs`` and an outside agent's ``get_outputs`` (both read the queue's
pending cells) said it was still running, until the save ended: on CI, with two servers'
tests side by side, an MCP test read "running or queued" after the tab showed the run
interrupted and done. A slow save (a contents manager set in config) holds that moment
open here.
"""

from __future__ import annotations

from typing import Any

import pytest
from loop_helpers import wait_for
from traitlets.config import Config

SAVE_DELAY = 3.0


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.save_delay = SAVE_DELAY
    jp_server_config.DelayedSavesContentsManager.saving_file = ""
    return jp_server_config


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"save_interval": 0.2}


@pytest.mark.timeout(60)
async def test_a_cell_shown_done_is_not_pending_while_its_end_waits_for_a_save(
    notebook_in_tab: Any, run_cells: Any, api: Any, tmp_path: Any
) -> None:
    # A line first, then a pause past the save interval: the run's end saves, slowly.
    source = "import time\nprint('start', flush=True)\ntime.sleep(0.6)\nanswer = 42"
    async with notebook_in_tab("slow-save.ipynb", source) as (path, tab):
        await run_cells(path, "c0")
        await wait_for(lambda: (tab.marker("c0") or {}).get("state") == "done", timeout=30)
        pending = await api("api", "jupyter-loop", "runs", params={"path": path})
    assert pending["cells"] == [], pending
