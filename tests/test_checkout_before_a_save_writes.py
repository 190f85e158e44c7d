"""A file replaced on disk after the room checked it and before the server's save writes.

The room looks at the file's time, finds its own last write and saves; serializing and
the pre-save hooks take a moment, and a ``git checkout`` landing in it was renamed over:
the save compared the file only with what it found when it began to write (chaos seed
2029 trial 3, under load). Now the file is checked again as the save is put in place: a
file neither the server's own last write nor read by the room since is left as it is, the
save fails with a 409, and the room reloads the file.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import notebook_json, source_on_disk, type_in, wait_for
from traitlets.config import Config

from jupyter_loop.testing.yjs import disagreements, read_with_yjs

SAVE_DELAY = 0.3
WRITE_DELAY = 0.6


@pytest.fixture
def jp_server_config(jp_server_config: Config, tmp_path: Path) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.write_delay = WRITE_DELAY
    jp_server_config.DelayedSavesContentsManager.write_file = str(tmp_path / "writing")
    jp_server_config.YDocExtension.document_save_delay = SAVE_DELAY
    return jp_server_config


@pytest.mark.timeout(90)
async def test_a_checkout_between_the_rooms_check_and_the_write_is_not_saved_over(
    jp_root_dir: Path, open_tab: Any, tmp_path: Path
) -> None:
    path = "checkout.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    writing = tmp_path / "writing"
    async with open_tab(path) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2)
        await asyncio.sleep(SAVE_DELAY + WRITE_DELAY + 0.5)  # any save of the opening is over
        writing.unlink(missing_ok=True)

        def check_out() -> None:  # another program, once the room's save has checked
            for _ in range(1000):
                if writing.exists():
                    break
                threading.Event().wait(0.01)
            replacement = target.with_name("checkout.ipynb.new")
            replacement.write_text(notebook_json("x = 'checked out'", "y = 2"), "utf-8")
            os.replace(replacement, target)

        program = threading.Thread(target=check_out)
        program.start()
        type_in(tab, "c1", " # a")  # the room's autosave follows
        await asyncio.to_thread(program.join)
        await asyncio.sleep(WRITE_DELAY + 0.5)  # the save that began before the checkout
        assert source_on_disk(target, 0) == "x = 'checked out'"
        await wait_for(lambda: tab.cell("c0")["source"] == "x = 'checked out'", timeout=10)
        assert tab.cell("c1")["source"] == "y = 2"  # the file wins, as for any checkout
        await asyncio.sleep(SAVE_DELAY + WRITE_DELAY + 1)  # the room's next saves
        assert source_on_disk(target, 0) == "x = 'checked out'"
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert disagreements(tab.notebook.ydoc, seen) == []
