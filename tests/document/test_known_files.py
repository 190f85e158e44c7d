"""Each notebook file as the server last knew it: its own saves are known, through a save
cut off at its rename and a save written in place; a file someone else wrote is not.

jupyter_server's own file manager with jupyter-loop's save layer, on a real directory, and
a real event logger with jupyter-collaboration's schema for a room's reads."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_events import EventLogger
from jupyter_server_ydoc.utils import EVENTS_SCHEMA_PATH
from loop_helpers import notebook_json
from tornado.web import HTTPError

from jupyter_loop.document import collaboration
from jupyter_loop.document.known_files import KnownFiles
from jupyter_loop.saves import ReplacingAsyncLargeFileManager

PATH = "known.ipynb"


def manager_in(root: Path, **traits: Any) -> ReplacingAsyncLargeFileManager:
    root.mkdir(exist_ok=True)
    return ReplacingAsyncLargeFileManager(root_dir=str(root), **traits)


async def save(manager: ReplacingAsyncLargeFileManager, source: str) -> None:
    content = nbformat.reads(notebook_json(source), as_version=4)
    await manager.save({"type": "notebook", "format": "json", "content": content}, PATH)


def check_out(root: Path, source: str) -> None:
    """Another program replaces the file, as ``git checkout`` does."""
    other = root / (PATH + ".checkout")
    other.write_text(notebook_json(source), encoding="utf-8")
    os.replace(other, root / PATH)


class Process:
    """One server process's record keeper, contents manager and room events, on the same
    data dir and root as every other process of the test."""

    def __init__(self, tmp_path: Path, **traits: Any) -> None:
        self.known = KnownFiles(tmp_path / "known_files", logging.getLogger("test"))
        self.manager = manager_in(tmp_path / "root", **traits)
        self.events = EventLogger()
        self.events.register_event_schema(EVENTS_SCHEMA_PATH)
        self.known.start(self.manager, self.events)

    async def room_reads(self) -> None:
        """The notebook's room reads its file, as jupyter-collaboration says it did."""
        data = {"level": "INFO", "room": "json:notebook:1", "path": PATH,
                "action": "initialize", "msg": "Room initialized"}  # fmt: skip
        self.events.emit(schema_id=collaboration.EVENTS_SCHEMA, data=data)
        await asyncio.sleep(0.05)  # listeners run as tasks

    def replaced(self) -> bool:
        return self.known.replaced_while_down(PATH)


def killed_before_the_rename(manager: ReplacingAsyncLargeFileManager) -> None:
    """The next save of ``manager`` stops where a kill between its record and its rename
    would (the file is left as it was)."""

    def killed_here(os_path: str, found: Any, new: Any) -> None:
        raise HTTPError(409, "the process died here")

    manager.check_before_replacing(killed_here)  # after the record's step


async def test_the_last_processs_save_is_known_and_a_checkout_after_it_is_not(
    tmp_path: Path,
) -> None:
    first = Process(tmp_path)
    await save(first.manager, "x = 1")
    assert not Process(tmp_path).replaced()

    check_out(tmp_path / "root", "x = 2")
    assert Process(tmp_path).replaced()


async def test_a_file_never_saved_nor_read_is_trusted(tmp_path: Path) -> None:
    Process(tmp_path)
    check_out(tmp_path / "root", "x = 0")
    assert not Process(tmp_path).replaced()


async def test_a_file_the_last_processs_room_read_is_known(tmp_path: Path) -> None:
    first = Process(tmp_path)
    check_out(tmp_path / "root", "x = 0")
    await first.room_reads()
    assert not Process(tmp_path).replaced()
    check_out(tmp_path / "root", "x = 1")
    assert Process(tmp_path).replaced()


async def test_the_verdict_is_on_the_file_the_room_read(tmp_path: Path) -> None:
    """A room's load may first save the stored notebook over the file (one that lags its
    store): that save is the process's own. A checkout the room then reads is not."""
    first = Process(tmp_path)
    await save(first.manager, "x = 1")

    after = Process(tmp_path)
    await save(after.manager, "x = 2")  # the stored notebook saved over a lagging file
    await after.room_reads()
    assert not after.replaced()

    check_out(tmp_path / "root", "x = 3")  # down again; then a checkout, read at the load
    again = Process(tmp_path)
    await again.room_reads()
    await save(again.manager, "x = 4")  # the room's later saves do not make it known
    assert again.replaced()

    last = Process(tmp_path)
    await save(last.manager, "x = 5")  # the load's save over a lagging file ...
    check_out(tmp_path / "root", "x = 6")  # ... a checkout in the moment before its read
    await last.room_reads()
    assert last.replaced()


async def test_a_save_cut_off_just_before_its_rename_leaves_a_known_file(
    tmp_path: Path,
) -> None:
    """The record of a save is written before its rename: a kill between the two leaves
    the old file, which must still count as the server's own."""
    first = Process(tmp_path)
    await save(first.manager, "x = 1")
    killed_before_the_rename(first.manager)
    with pytest.raises(HTTPError):
        await save(first.manager, "x = 2")
    assert "x = 1" in (tmp_path / "root" / PATH).read_text(encoding="utf-8")
    assert not Process(tmp_path).replaced()


async def test_a_checkout_a_save_was_about_to_replace_stays_unknown(tmp_path: Path) -> None:
    """A save about to replace a file someone else wrote, cut off before its rename:
    the other program's file is what a restart finds, and it wins."""
    first = Process(tmp_path)
    await save(first.manager, "x = 1")
    check_out(tmp_path / "root", "x = 2")
    killed_before_the_rename(first.manager)
    with pytest.raises(HTTPError):
        await save(first.manager, "x = 3")
    assert Process(tmp_path).replaced()


async def test_a_save_written_in_place_is_known(tmp_path: Path) -> None:
    first = Process(tmp_path, use_atomic_writing=False)
    await save(first.manager, "x = 1")
    await save(first.manager, "x = 2")
    assert not Process(tmp_path, use_atomic_writing=False).replaced()
    check_out(tmp_path / "root", "x = 3")
    assert Process(tmp_path, use_atomic_writing=False).replaced()
