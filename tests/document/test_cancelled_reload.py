"""A file changed on disk whose reload the room's own autosave loses to a keystroke.

jupyter-collaboration's autosave finds the changed file, takes its time as its own and
reloads it inside the save's task; a document change while the file is read cancels that
task, and the reload with it. Its next save then wrote the old notebook over the checked-out
file (``docs/upstream/cancelled-reload.md``; chaos seed 2029 trial 3). Only the autosave
can see the change here: the file's watcher polls once an hour.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json, replace_on_disk, source_on_disk, type_in, wait_for
from traitlets.config import Config

from jupyter_loop.testing.yjs import disagreements, read_with_yjs

SAVE_DELAY = 0.3
READ_DELAY = 0.6


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.read_delay = READ_DELAY
    jp_server_config.YDocExtension.document_save_delay = SAVE_DELAY
    jp_server_config.YDocExtension.file_poll_interval = 3600
    return jp_server_config


@pytest.mark.timeout(90)
@pytest.mark.parametrize("a_tab_joins", [False, True], ids=["one-tab", "a-tab-joins"])
async def test_a_checkout_is_not_saved_over_when_a_keystroke_cancels_its_reload(
    jp_root_dir: Path, open_tab: Any, a_tab_joins: bool
) -> None:
    path = "checkout.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    async with open_tab(path) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2)
        replace_on_disk(target, notebook_json("x = 'checked out'", "y = 2"))
        type_in(tab, "c1", " # a")
        # The autosave comes after SAVE_DELAY of quiet, finds the file changed and starts
        # reading it (READ_DELAY): a keystroke in that read cancels the reload.
        await asyncio.sleep(SAVE_DELAY + READ_DELAY / 2)
        type_in(tab, "c1", " # b")
        if a_tab_joins:  # a client joining is no reading of the file (the room says
            # "initialize" for it, as it does when it loads the file)
            async with open_tab(path) as other:
                await wait_for(lambda: len(other.notebook.ycells) == 2)
        await asyncio.sleep(SAVE_DELAY + READ_DELAY + 2)  # the next autosave, and more
        assert source_on_disk(target, 0) == "x = 'checked out'"
        await wait_for(lambda: tab.cell("c0")["source"] == "x = 'checked out'", timeout=10)
        await asyncio.sleep(SAVE_DELAY + READ_DELAY + 1)
        assert source_on_disk(target, 0) == "x = 'checked out'"
        # The browser's library reads the reloaded notebook as pycrdt does, nothing held back.
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert disagreements(tab.notebook.ydoc, seen) == []
