"""The compact YStore keeps the document through squashes of its history."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path

import pytest
from jupyter_server_ydoc.stores import SQLiteYStore
from pycrdt import Doc, Text

from jupyter_loop.ystore import CompactSQLiteYStore

LOG = logging.getLogger("test")


async def store_lines(store: SQLiteYStore, lines: int, pause: float = 0.0) -> Doc:
    """Write a document's updates into ``store``, one line of text per update; the last
    one after ``pause`` seconds."""
    doc = Doc()
    text = doc.get("text", type=Text)
    updates: list[bytes] = []
    doc.observe(lambda event: updates.append(event.update))
    for i in range(lines):
        if i == lines - 1:
            time.sleep(pause)
        text += f"line {i}\n"
        await store.write(updates.pop())
    return doc


async def stored_text(store_class: type[SQLiteYStore], db: Path) -> str:
    reader = store_class(path="nb", log=LOG, db_path=str(db))
    async with reader:
        doc = Doc()
        await reader.apply_updates(doc)
        return str(doc.get("text", type=Text))


async def test_a_squashed_history_still_holds_the_document(tmp_path: Path):
    db = tmp_path / "store.db"
    store = CompactSQLiteYStore(path="nb", log=LOG, db_path=str(db), squash_history_older_than=0)
    async with store:
        store.squash_no_more_often_than = 0
        # The last write comes when the others are history: it squashes them.
        doc = await store_lines(store, 30, pause=0.05)
    with sqlite3.connect(db) as connection:
        (rows,) = connection.execute("SELECT count(*) FROM yupdates").fetchone()
    assert rows <= 2  # history merged
    assert await stored_text(CompactSQLiteYStore, db) == str(doc.get("text", type=Text))


async def test_the_plain_store_loses_the_document_when_it_squashes(tmp_path: Path):
    """Why the compact store registers (identity) decompression hooks."""
    db = tmp_path / "store.db"
    store = SQLiteYStore(path="nb", log=LOG, db_path=str(db))
    store.squash_history_older_than = 0
    store.squash_no_more_often_than = 0
    async with store:
        doc = await store_lines(store, 30, pause=0.05)
    assert await stored_text(SQLiteYStore, db) != str(doc.get("text", type=Text))


@pytest.mark.parametrize("root", [Path(__file__).parent.parent])
def test_the_shipped_server_config_uses_the_compact_store(root: Path):
    config = json.loads((root / "jupyter-config/server-config/jupyter_loop.json").read_text())
    assert config["YDocExtension"]["ystore_class"] == "jupyter_loop.ystore.CompactSQLiteYStore"
