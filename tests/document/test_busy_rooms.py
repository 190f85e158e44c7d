"""What each Y update of a busy room costs the server's event loop: no task of its own for
the store, and the store's writes on its own thread, one trip per write.

Found with py-spy on the server under ``bench/capacity.py`` (20 notebooks printing): an
anyio task per update for the store was a tenth of the loop, and anyio's search for a root
task at each of the store's SQLite calls another 8 %. Counted here, never timed.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from typing import Any

import pytest
from pycrdt import Doc, Text

from jupyter_loop.store_rows import THREAD_NAME
from jupyter_loop.ystore import CompactSQLiteYStore

UPDATES = 200


class TracedStore(CompactSQLiteYStore):
    """The server's store, with each SQLite statement it runs noted with its thread."""

    statements: list[tuple[str, str]] = []

    async def _init_db(self) -> None:
        await super()._init_db()
        self._db._real_connection.set_trace_callback(self._noted)

    @staticmethod
    def _noted(statement: str) -> None:
        TracedStore.statements.append((threading.current_thread().name, statement))


@pytest.fixture
def jp_server_config(jp_server_config: Any) -> Any:
    jp_server_config.YDocExtension.ystore_class = f"{__name__}.TracedStore"
    return jp_server_config


def stored_state(server: Any, path: str) -> bytes:
    """The state of the document the store's rows of ``path`` make, read with sqlite3."""
    with sqlite3.connect(server.config.SQLiteYStore.db_path) as db:
        rows = db.execute("SELECT yupdate FROM yupdates WHERE path = ?", (path,)).fetchall()
    document = Doc()
    for (row,) in rows:
        document.apply_update(row)
    return document.get_state()


def loop_app(server: Any) -> Any:
    (app,) = server.extension_manager.extension_apps["jupyter_loop"]
    return app


async def updates_into_a_room(server: Any, write_notebook: Any, counted: list[Any] | None):
    """Make ``UPDATES`` transactions in a notebook's room as the output writer does (one
    per flush), each on its own turn of the loop; return once the store holds them all."""
    documents = loop_app(server).documents
    path = write_notebook("busy.ipynb", "print(1)")
    room_id = await documents.room_id(path)
    async with documents.edit(room_id) as notebook:
        source = notebook.ycells[0]["source"]
    assert isinstance(source, Text)
    await asyncio.sleep(0.5)  # the room's first writes are stored
    loop = asyncio.get_running_loop()
    if counted is not None:
        loop.set_task_factory(
            lambda loop, coro, **kw: counted.append(coro) or asyncio.Task(coro, loop=loop, **kw)
        )
    try:
        for line in range(UPDATES):
            source += f"\nprint({line})"
            await asyncio.sleep(0)
    finally:
        loop.set_task_factory(None)
    _, room = documents.loaded_room(path)
    deadline = loop.time() + 10
    while stored_state(server, room.ystore.path) != room.ydoc.get_state():
        assert loop.time() < deadline, "the store did not get every update"
        await asyncio.sleep(0.1)


async def test_updates_into_a_room_start_no_task_each(
    jp_serverapp: Any, write_notebook: Any
) -> None:
    counted: list[Any] = []
    await updates_into_a_room(jp_serverapp, write_notebook, counted)
    # jupyter_server_ydoc's room restarts its debounced save at each change of the
    # document (a task each, as in stock JupyterLab): not counted here.
    ours = [c for c in counted if c.__qualname__ != "DocumentRoom._maybe_save_document"]
    # A batch of updates (write_interval) starts one; an anyio task each started 200.
    assert len(ours) < UPDATES / 10, [c.__qualname__ for c in ours[:5]]


async def test_the_store_writes_each_batch_in_one_trip_to_its_own_thread(
    jp_serverapp: Any, write_notebook: Any
) -> None:
    TracedStore.statements.clear()
    await updates_into_a_room(jp_serverapp, write_notebook, None)
    inserts = [thread for thread, sql in TracedStore.statements if sql.startswith("INSERT")]
    assert inserts and set(inserts) == {THREAD_NAME}, set(inserts)
