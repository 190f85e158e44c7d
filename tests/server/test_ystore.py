"""The compact YStore: a chatty notebook's store stays small, and its document whole."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
from jupyter_server_ydoc.stores import SQLiteYStore
from jupyter_ydoc import YNotebook
from loop_helpers import notebook_json
from pycrdt import Doc, Map, Provider, Text, UndoManager

from jupyter_loop.testing.server_process import ServerProcess
from jupyter_loop.testing.yjs import read_with_yjs
from jupyter_loop.ystore import CompactSQLiteYStore

LOG = logging.getLogger("test")
OUTPUT = "".join(f"{i}\n" for i in range(10_000))  # about 50 KB, as a cell's budgeted output


class Tab:
    """A document edited as a tab edits it; each edit's update goes to the store."""

    def __init__(self, store: SQLiteYStore) -> None:
        self.doc = Doc()
        self.text = self.doc.get("text", type=Text)
        self.undo = UndoManager(scopes=[self.text], capture_timeout_millis=0)
        self._store = store
        self._updates: list[bytes] = []
        self.doc.observe(lambda event: self._updates.append(event.update))

    async def edit(self, new_text: str) -> None:
        """Replace the whole text, as a run replaces a cell's outputs."""
        with self.doc.transaction():
            del self.text[:]
            self.text += new_text
        await self._store.write(self._updates.pop())

    async def append(self, more: str) -> None:
        self.text += more
        await self._store.write(self._updates.pop())


async def stored_doc(store_class: type[SQLiteYStore], db: Path) -> Doc:
    """The document as a room loads it from the store."""
    reader = store_class(path="nb", log=LOG, db_path=str(db))
    async with reader:
        doc = Doc()
        await reader.apply_updates(doc)
        return doc


async def stored_text(store_class: type[SQLiteYStore], db: Path) -> str:
    """The stored text as the server loads it, checked against what Yjs (a tab) reads of the
    same rows: nothing held back, the same text."""
    text = str((await stored_doc(store_class, db)).get("text", type=Text))
    with sqlite3.connect(db) as rows:
        updates = [bytes(row[0]) for row in rows.execute(STORED_ROWS)]
    (tab,) = read_with_yjs({"nb": updates}, texts=["text"]).values()
    assert tab.whole, tab.pending
    assert tab.texts["text"] == text
    return text


STORED_ROWS = "SELECT yupdate FROM yupdates WHERE path = 'nb' ORDER BY timestamp"


def squashing(
    db: Path, older_than: int, interval: int = 0, write_interval: float = 0
) -> CompactSQLiteYStore:
    return CompactSQLiteYStore(
        path="nb",
        log=LOG,
        db_path=str(db),
        squash_history_older_than=older_than,
        squash_no_more_often_than=interval,
        write_interval=write_interval,
    )


async def test_updates_that_come_together_are_written_as_one(tmp_path: Path):
    """A room writes each transaction's update in a task of its own, as here."""
    db = tmp_path / "store.db"
    async with squashing(db, older_than=30, write_interval=0.2) as store:
        doc = Doc()
        text = doc.get("text", type=Text)
        doc.observe(lambda event: asyncio.ensure_future(store.write(event.update)))
        for cell in range(50):
            text += f"cell {cell} done\n"
        await asyncio.sleep(0.5)
        rows = [update async for update in store.read()]
    assert len(rows) == 1
    assert await stored_text(CompactSQLiteYStore, db) == str(text)


async def test_many_runs_leave_a_store_of_one_run(tmp_path: Path):
    db = tmp_path / "store.db"
    async with squashing(db, older_than=0) as store:
        tab = Tab(store)
        for run in range(200):
            await tab.edit(f"run {run}\n{OUTPUT}")
        # 200 runs wrote 10 MB; the store keeps the document and the last update.
        assert db.stat().st_size < 4 * len(OUTPUT)
    assert await stored_text(CompactSQLiteYStore, db) == str(tab.text)


async def test_recent_history_is_kept_update_by_update(tmp_path: Path):
    """jupyter-collaboration's timeline steps through the store's updates."""
    db = tmp_path / "store.db"
    async with squashing(db, older_than=30) as store:
        tab = Tab(store)
        for line in range(5):
            await tab.append(f"line {line}\n")
        updates = [update async for update in store.read()]
    assert len(updates) == 5


async def test_undo_in_a_tab_still_applies_after_a_squash_and_a_reload(tmp_path: Path):
    db = tmp_path / "store.db"
    async with squashing(db, older_than=0) as store:
        tab = Tab(store)
        for word in ("kept", " undone", " too"):
            await tab.append(word)  # each write squashes the ones before
    room = await stored_doc(CompactSQLiteYStore, db)  # the room, reloaded from the store
    tab.undo.undo()
    tab.undo.undo()
    room.apply_update(tab.doc.get_update(room.get_state()))
    assert str(room.get("text", type=Text)) == str(tab.text) == "kept"


async def test_the_plain_store_loses_the_document_when_it_squashes(tmp_path: Path):
    """Why the compact store registers (identity) decompression hooks."""
    db = tmp_path / "store.db"
    store = SQLiteYStore(path="nb", log=LOG, db_path=str(db))
    store.squash_history_older_than = 0
    store.squash_no_more_often_than = 0
    async with store:
        tab = Tab(store)
        for line in range(30):
            await tab.append(f"line {line}\n")
    stored = await stored_doc(SQLiteYStore, db)
    assert str(stored.get("text", type=Text)) != str(tab.text)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path,
        "--CompactSQLiteYStore.squash_history_older_than=1",
        "--CompactSQLiteYStore.squash_no_more_often_than=1",
    )
    yield process
    process.kill()


@pytest.mark.timeout(180)
async def test_an_installed_server_squashes_a_chatty_notebooks_store(server: ServerProcess):
    """jupyter-loop chooses the store for jupyter-collaboration (configured as users do)."""
    path = "chatty.ipynb"
    server.root.mkdir(parents=True)
    code = "for i in range(20_000):\n    print(i)"
    (server.root / path).write_text(notebook_json(code), encoding="utf-8")
    server.start()
    await server.ready()
    kernel_id = await server.start_kernel(path)
    channel, notebook = await server.open_room(path)
    async with Provider(notebook.ydoc, channel):
        board = notebook.ydoc.get("jupyter_loop:execution", type=Map)
        start, runs = time.monotonic(), 0
        while time.monotonic() - start < 6 or runs < 10:
            await server.timed_run(path, kernel_id, board)
            runs += 1
        await asyncio.sleep(1)  # the last updates reach the store
        outputs = notebook.ycells[0]["outputs"].to_py()
    server.kill()
    with sqlite3.connect(server.ystore) as db:
        (room, oldest, newest, size) = db.execute(
            "SELECT path, min(timestamp), max(timestamp), sum(length(yupdate)) FROM yupdates"
        ).fetchone()
    # The history kept is the last seconds' (older is one update), however long it ran.
    assert newest - oldest < 4, (newest - oldest, runs)
    assert size < runs * len(json.dumps(outputs)) / 2, (size, runs)
    if int(version("jupyter_server_ydoc").split(".")[0]) < 3:
        # jupyter-collaboration 4 (JupyterLab 4.5) never stores the server's first change
        # after loading a notebook from its file (it marks the document clean before it
        # watches it), so its store cannot rebuild what the server wrote, squashed or not:
        # a room reloaded there falls back to the file.
        return
    reader = CompactSQLiteYStore(path=room, log=LOG, db_path=str(server.ystore))
    async with reader:
        reloaded = YNotebook()
        await reader.apply_updates(reloaded.ydoc)
    assert reloaded.ycells[0]["outputs"].to_py() == outputs


@pytest.mark.timeout(120)
async def test_a_notebook_run_with_no_tab_open_is_stored_where_configured(server: ServerProcess):
    """jupyter-collaboration builds the store of a room opened on the server (as
    jupyter-loop opens a notebook no tab shows) without the server's configuration."""
    server.root.mkdir(parents=True)
    (server.root / "alone.ipynb").write_text(notebook_json("print('ran')"), encoding="utf-8")
    server.start()
    await server.ready()
    kernel_id = await server.start_kernel("alone.ipynb")
    body = {"path": "alone.ipynb", "cell_ids": ["c0"], "kernel_id": kernel_id}
    await server.api("api", "jupyter-loop", "runs", method="POST", body=body)
    deadline = time.monotonic() + 60
    while not (saved := server.saved("alone.ipynb")) or not saved.cells[0].outputs:
        assert time.monotonic() < deadline, "the run did not end"  # (None: read mid-save)
        await asyncio.sleep(0.2)
    assert saved.cells[0].outputs[0]["text"] == "ran\n"
    await asyncio.sleep(1)  # the store is written a moment after the document
    server.kill()
    assert not (server.home / ".jupyter_ystore.db").exists()  # the server's working directory
    with sqlite3.connect(server.ystore) as db:
        (rows,) = db.execute("SELECT count(*) FROM yupdates").fetchone()
    assert rows > 0
