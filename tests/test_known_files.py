"""Each notebook file as the server last knew it: its own saves are known, through a save
cut off at its rename and a save written in place; a file someone else wrote is not.

jupyter_server's own file manager with jupyter-loop's save layer, on a real directory."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from conftest import notebook_json
from tornado.web import HTTPError

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


def process(tmp_path: Path, **traits: Any) -> tuple[KnownFiles, ReplacingAsyncLargeFileManager]:
    """One server process's record keeper and contents manager, on the same data dir and
    root as every other process of the test."""
    known = KnownFiles(tmp_path / "known_files", logging.getLogger("test"))
    manager = manager_in(tmp_path / "root", **traits)
    known.start(manager, None)
    return known, manager


def killed_before_the_rename(manager: ReplacingAsyncLargeFileManager) -> None:
    """The next save of ``manager`` stops where a kill between its record and its rename
    would (the file is left as it was)."""

    def killed_here(os_path: str, found: Any, new: Any) -> None:
        raise HTTPError(409, "the process died here")

    manager.check_before_replacing(killed_here)  # after the record's step


async def test_the_last_processs_save_is_known_and_a_checkout_after_it_is_not(
    tmp_path: Path,
) -> None:
    _, manager = process(tmp_path)
    await save(manager, "x = 1")
    after_a_restart, _ = process(tmp_path)
    assert not after_a_restart.replaced_while_down(PATH)

    check_out(tmp_path / "root", "x = 2")
    after_a_checkout, _ = process(tmp_path)
    assert after_a_checkout.replaced_while_down(PATH)


async def test_a_file_never_saved_nor_read_is_trusted(tmp_path: Path) -> None:
    process(tmp_path)
    check_out(tmp_path / "root", "x = 0")
    after, _ = process(tmp_path)
    assert not after.replaced_while_down(PATH)


async def test_the_verdict_is_on_the_file_as_first_found_not_after_its_own_saves(
    tmp_path: Path,
) -> None:
    """A room's load may save over the file before the recovery asks (a file that lags
    its store): the checkout it found first still counts, and so does the known file."""
    _, manager = process(tmp_path)
    await save(manager, "x = 1")
    check_out(tmp_path / "root", "x = 2")
    after, manager = process(tmp_path)
    await save(manager, "x = 3")
    assert after.replaced_while_down(PATH)

    again, manager = process(tmp_path)
    await save(manager, "x = 4")
    assert not again.replaced_while_down(PATH)


async def test_a_save_cut_off_just_before_its_rename_leaves_a_known_file(
    tmp_path: Path,
) -> None:
    """The record of a save is written before its rename: a kill between the two leaves
    the old file, which must still count as the server's own."""
    _, manager = process(tmp_path)
    await save(manager, "x = 1")
    killed_before_the_rename(manager)
    with pytest.raises(HTTPError):
        await save(manager, "x = 2")
    assert "x = 1" in (tmp_path / "root" / PATH).read_text(encoding="utf-8")
    after, _ = process(tmp_path)
    assert not after.replaced_while_down(PATH)


async def test_a_checkout_a_save_was_about_to_replace_stays_unknown(tmp_path: Path) -> None:
    """A save about to replace a file someone else wrote, cut off before its rename:
    the other program's file is what a restart finds, and it wins."""
    _, manager = process(tmp_path)
    await save(manager, "x = 1")
    check_out(tmp_path / "root", "x = 2")
    killed_before_the_rename(manager)
    with pytest.raises(HTTPError):
        await save(manager, "x = 3")
    after, _ = process(tmp_path)
    assert after.replaced_while_down(PATH)


async def test_a_save_written_in_place_is_known(tmp_path: Path) -> None:
    _, manager = process(tmp_path, use_atomic_writing=False)
    await save(manager, "x = 1")
    await save(manager, "x = 2")
    after, _ = process(tmp_path, use_atomic_writing=False)
    assert not after.replaced_while_down(PATH)
    check_out(tmp_path / "root", "x = 3")
    later, _ = process(tmp_path, use_atomic_writing=False)
    assert later.replaced_while_down(PATH)
