"""A room save queued behind its file watcher does not write over the file the watcher found.

jupyter-collaboration's watcher looks at the file's time under the room loader's lock, takes
a new time as read, lets the lock go and only then reads the file. A save waiting for that
lock (a keystroke's autosave, an output's) gets it first, finds the file's time to be the
loader's own and writes the room's older notebook over the checkout; the watcher then reads
back the room's notebook and the checkout is gone for good (chaos seed 2036 trial 157,
under load: a ``git checkout`` during a run, never shown in the room).

And a save that took the room's notebook before the watcher read the file, and the lock
after it, writes the notebook from before the reload; the reload's own change starts no
autosave (upstream sets the document under its update lock), so the file kept the old
notebook while every tab showed the checkout, until the next edit or a restart (where the
file won: chaos seed 2038 trial 303, a checkout gone after a kill).
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
LOOK_DELAY = 1.5


@pytest.fixture
def looking_file(tmp_path: Path) -> Path:
    return tmp_path / "looking"


@pytest.fixture
def reading_file(tmp_path: Path) -> Path:
    return tmp_path / "reading"


@pytest.fixture
def slow(request: pytest.FixtureRequest) -> str:
    return "look"  # which step of the watcher takes long: its "look" or its "read"


@pytest.fixture
def jp_server_config(
    jp_server_config: Config, looking_file: Path, reading_file: Path, slow: str
) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    if slow == "look":
        jp_server_config.DelayedSavesContentsManager.changed_look_delay = LOOK_DELAY
        jp_server_config.DelayedSavesContentsManager.changed_look_file = str(looking_file)
    else:
        jp_server_config.DelayedSavesContentsManager.read_delay = LOOK_DELAY
        jp_server_config.DelayedSavesContentsManager.reading_file = str(reading_file)
    jp_server_config.YDocExtension.document_save_delay = SAVE_DELAY
    jp_server_config.YDocExtension.file_poll_interval = 0.3
    return jp_server_config


@pytest.mark.timeout(90)
async def test_a_save_queued_behind_the_watchers_look_does_not_undo_a_checkout(
    jp_root_dir: Path, open_tab: Any, looking_file: Path
) -> None:
    path = "checkout.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    async with open_tab(path) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2)
        type_in(tab, "c1", " # saved")  # the room saves once: its file is its own
        await wait_for(lambda: source_on_disk(target, 1) == "y = 1 # saved", timeout=10)
        # The watcher's next look sees the room's own save as a change, and waits too.
        await wait_for(looking_file.exists, timeout=10)
        await asyncio.sleep(LOOK_DELAY + 0.5)
        looking_file.unlink()

        replace_on_disk(target, notebook_json("x = 'checked out'", "y = 2"))
        # The watcher's next look sees it and holds the loader's lock for LOOK_DELAY; a
        # keystroke's autosave comes within it and waits for that lock.
        await wait_for(looking_file.exists, timeout=10)
        type_in(tab, "c1", " # typed")

        await wait_for(lambda: tab.cell("c0")["source"] == "x = 'checked out'", timeout=15)
        assert source_on_disk(target, 0) == "x = 'checked out'"
        # A change while the room sets its notebook starts no autosave (upstream): type
        # once the reload is over.
        await asyncio.sleep(LOOK_DELAY)
        type_in(tab, "c1", " # after")  # the room's next save holds the checkout
        await wait_for(lambda: source_on_disk(target, 1).endswith(" # after"), timeout=10)
        assert source_on_disk(target, 0) == "x = 'checked out'"
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert disagreements(tab.notebook.ydoc, seen) == []


@pytest.mark.timeout(90)
@pytest.mark.parametrize("slow", ["read"])
async def test_a_save_of_the_notebook_before_a_reload_is_followed_by_one_after_it(
    jp_root_dir: Path, open_tab: Any, reading_file: Path, slow: str
) -> None:
    path = "checkout.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    async with open_tab(path) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2)
        await asyncio.sleep(LOOK_DELAY + 0.5)  # the room's own load read the file slowly
        reading_file.unlink(missing_ok=True)

        replace_on_disk(target, notebook_json("x = 'checked out'", "y = 2"))
        # The watcher reads it for LOOK_DELAY, holding the loader's lock; a keystroke's
        # autosave takes the notebook as it is now and waits for that lock.
        await wait_for(reading_file.exists, timeout=10)
        type_in(tab, "c1", " # typed")

        await wait_for(lambda: tab.cell("c0")["source"] == "x = 'checked out'", timeout=15)
        # No one types any more: the file must come to hold what every tab shows.
        await wait_for(lambda: source_on_disk(target, 0) == "x = 'checked out'", timeout=15)
        await asyncio.sleep(LOOK_DELAY + 1)
        assert source_on_disk(target, 0) == "x = 'checked out'"
        assert source_on_disk(target, 1) == str(tab.cell("c1")["source"])
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert disagreements(tab.notebook.ydoc, seen) == []
