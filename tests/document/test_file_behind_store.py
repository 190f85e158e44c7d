"""A room freed before its save: the file lags the store, and the store must win.

A tab types, then closes; jupyter-collaboration frees the room after its clean-up delay
and cancels the save still waiting (``DocumentRoom.stop``), so the file on disk lacks the
last lines while the store holds them. When the notebook is opened again, upstream finds
the file "out-of-sync" with the store and sets the document from the file: the last lines
were gone, for every tab (and a tab that typed offline meanwhile got its lines doubled,
chaos seed 2029 trial 171). The same happens after a server is killed between its store's
write and its save (trial 232).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json, source_on_disk, type_in, wait_for
from traitlets.config import Config

from jupyter_loop.testing.yjs import disagreements, read_with_yjs

SAVE_DELAY = 2.0
CLEANUP_DELAY = 0.2


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.YDocExtension.document_save_delay = SAVE_DELAY
    jp_server_config.YDocExtension.document_cleanup_delay = CLEANUP_DELAY
    return jp_server_config


@pytest.mark.timeout(90)
async def test_lines_typed_just_before_the_tab_closed_are_there_when_it_opens_again(
    jp_root_dir: Path, open_tab: Any
) -> None:
    path = "freed.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    async with open_tab(path) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2)
        type_in(tab, "c0", "\n# saved")
        await wait_for(lambda: "# saved" in source_on_disk(target, 0), timeout=SAVE_DELAY + 10)
        await asyncio.sleep(0.5)  # the save's hash reaches the store
        type_in(tab, "c0", "\n# typed last")
        await asyncio.sleep(0.3)  # the keystrokes reach the server, not its save
    await asyncio.sleep(CLEANUP_DELAY + 1)  # the room is freed, its save cancelled
    assert "# typed last" not in source_on_disk(target, 0)  # the file lags the store

    async with open_tab(path) as again:
        await wait_for(lambda: len(again.notebook.ycells) == 2)
        await asyncio.sleep(0.5)  # whatever the room does on loading has reached the tab
        assert again.cell("c0")["source"] == "x = 1\n# saved\n# typed last"
        (seen,) = read_with_yjs({"tab": [again.notebook.ydoc.get_update()]}).values()
        assert disagreements(again.notebook.ydoc, seen) == []
        # The file has caught up with the notebook the server holds.
        assert source_on_disk(target, 0) == "x = 1\n# saved\n# typed last"


async def typed_then_freed(open_tab: Any, target: Path) -> None:
    """A tab types a line into a notebook its room never saved, then closes; the room is
    freed before its save (or, as well, the server killed)."""
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    async with open_tab(target.name) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2)
        await asyncio.sleep(0.5)  # the room has settled after its load
        type_in(tab, "c0", "\n# typed first")
        await asyncio.sleep(0.3)  # the keystrokes reach the server, not its save
    await asyncio.sleep(CLEANUP_DELAY + 1)  # the room is freed, its save cancelled
    assert source_on_disk(target, 0) == "x = 1"  # the file lags the store


async def reopened_source(open_tab: Any, path: str) -> str:
    """Cell c0 as a tab opening the notebook again sees it (Yjs agreeing with pycrdt)."""
    async with open_tab(path) as again:
        await wait_for(lambda: len(again.notebook.ycells) == 2)
        await asyncio.sleep(0.5)  # whatever the room does on loading has reached the tab
        (seen,) = read_with_yjs({"tab": [again.notebook.ydoc.get_update()]}).values()
        assert disagreements(again.notebook.ydoc, seen) == []
        return str(again.cell("c0")["source"])


@pytest.mark.timeout(90)
async def test_lines_typed_before_the_rooms_first_save_are_there_when_it_opens_again(
    jp_root_dir: Path, open_tab: Any
) -> None:
    """No save at all before the room was freed: the stored notebook has no hash of a
    save to say which file it knew, but its room recorded the file's hash at its load."""
    target = jp_root_dir / "never-saved.ipynb"
    await typed_then_freed(open_tab, target)
    assert await reopened_source(open_tab, target.name) == "x = 1\n# typed first"
    assert source_on_disk(target, 0) == "x = 1\n# typed first"


@pytest.mark.timeout(90)
async def test_a_file_replaced_while_its_never_saved_room_was_freed_wins(
    jp_root_dir: Path, open_tab: Any
) -> None:
    """The other side: a checkout after the room's load is not the file the store knew."""
    target = jp_root_dir / "replaced.ipynb"
    await typed_then_freed(open_tab, target)
    target.write_text(notebook_json("checked = 'out'", "y = 1"), encoding="utf-8")
    assert await reopened_source(open_tab, target.name) == "checked = 'out'"
    assert source_on_disk(target, 0) == "checked = 'out'"
