"""A file replaced on disk (a ``git checkout``) in the moments around a room's save.

- Before the write: the room looks at the file's time, finds its own last write and
  saves; serializing and the pre-save hooks take a moment, and a checkout landing in it
  was renamed over, as the save compared the file only with what it found when it began
  to write. The file is now checked again as the save is put in place: a file neither the
  server's own last write nor read by the room since is left as it is, the save fails
  with a 409, and the room reloads the file.
- After the write: jupyter_server reads the saved file's time back for the room, and a
  checkout landing first gave the room the checkout's time as its own save's. The file's
  watcher then never saw the change, and the room kept showing the old cells. A save whose
  file is no longer what it wrote now has the room reload the file.

Both were chaos seed 2029 trial 3, under load.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json, source_on_disk, type_in, wait_for
from traitlets.config import Config

from jupyter_loop.testing.yjs import disagreements, read_with_yjs

SAVE_DELAY = 0.3
WINDOW = 0.6  # how long a save waits at the moment under test


@pytest.fixture(params=["write", "hooks"], ids=["before-the-write", "after-the-write"])
def window(request: Any) -> str:
    """Where the save waits: ``write_delay`` (after the pre-save hooks, before the
    write) or ``hooks_delay`` (written, before jupyter_server reads the file back)."""
    return str(request.param)


@pytest.fixture
def jp_server_config(jp_server_config: Config, tmp_path: Path, window: str) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    manager = jp_server_config.DelayedSavesContentsManager
    manager[f"{window}_delay"] = WINDOW
    manager[f"{window}_file"] = str(tmp_path / "waiting")
    jp_server_config.YDocExtension.document_save_delay = SAVE_DELAY
    return jp_server_config


@pytest.mark.timeout(90)
async def test_a_checkout_during_a_rooms_save_is_kept_and_shown(
    jp_root_dir: Path, open_tab: Any, tmp_path: Path
) -> None:
    path = "checkout.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    waiting = tmp_path / "waiting"
    async with open_tab(path) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2)
        await asyncio.sleep(SAVE_DELAY + WINDOW + 0.5)  # any save of the opening is over
        waiting.unlink(missing_ok=True)

        def check_out() -> None:  # another program, while the room's save waits
            for _ in range(1000):
                if waiting.exists():
                    break
                threading.Event().wait(0.01)
            replacement = target.with_name("checkout.ipynb.new")
            replacement.write_text(notebook_json("x = 'checked out'", "y = 2"), "utf-8")
            os.replace(replacement, target)

        program = threading.Thread(target=check_out)
        program.start()
        type_in(tab, "c1", " # a")  # the room's autosave follows
        await asyncio.to_thread(program.join)
        await asyncio.sleep(WINDOW + 0.5)  # the save that was under way ends
        assert source_on_disk(target, 0) == "x = 'checked out'"
        await wait_for(lambda: tab.cell("c0")["source"] == "x = 'checked out'", timeout=10)
        assert tab.cell("c1")["source"] == "y = 2"  # the file wins, as for any checkout
        await asyncio.sleep(SAVE_DELAY + WINDOW + 1)  # the room's next saves
        assert source_on_disk(target, 0) == "x = 'checked out'"
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert disagreements(tab.notebook.ydoc, seen) == []
