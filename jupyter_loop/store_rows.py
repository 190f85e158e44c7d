"""The collaboration store's writes, each in one trip to a thread of the store's own.

pycrdt-store writes an update through sqlite-anyio: every SQLite call (a cursor, the
squash check and its row, the insert, the commit) is its own ``anyio.to_thread`` call, and
each such call makes anyio look for the event loop's root task by walking every task on
the loop, a search that never succeeds under jupyter_server (its loop runs with
``run_forever``, so anyio caches nothing). On a server with 20 notebooks printing that
search alone was 8 % of the event loop's time for jupyter-loop and 20 % for stock
JupyterLab (py-spy under ``bench/capacity.py``). Here the same statements run together
in one call on one thread shared by every room's store, handed over with
``loop.run_in_executor`` (no task search): SQLite writes one transaction at a time
anyway, and the loop waits for none of it.

The statements are pycrdt-store 0.1.5's (``SQLiteYStore.write``): squash the history
older than ``squash_history_older_than`` (or all of it after ``squash_after_inactivity_of``
seconds idle) at most every ``squash_no_more_often_than`` seconds, refresh the checkpoint
every ``checkpoint_interval`` updates, insert the update, commit; on an error the
transaction is rolled back, as sqlite-anyio's connection does. The caller holds the
store's lock, as pycrdt-store's own reads and writes of the connection do.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from functools import partial
from typing import Any, TypeVar

from pycrdt import Doc

T = TypeVar("T")
THREAD_NAME = "jupyter-loop-store"


class StoreThread(Executor):
    """One daemon thread that runs the calls handed to it, in order.

    Rejected: a one-worker ``ThreadPoolExecutor``, whose worker is not a daemon: idle
    after its server stopped, it kept a pytest-xdist worker process from exiting for the
    60 s of the exit guard (CI). A daemon is safe here: the rooms' last writes are awaited
    before a server stops, and a write cut at the process's exit is one SQLite
    transaction, rolled back whole.
    """

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        threading.Thread(target=self._run, name=THREAD_NAME, daemon=True).start()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        self._calls.put((future, partial(fn, *args, **kwargs)))
        return future

    def _run(self) -> None:
        while True:
            future, call = self._calls.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as e:  # handed to the caller, as an executor does
                future.set_exception(e)


_thread: StoreThread | None = None


async def in_store_thread(call: Callable[..., T], *args: Any) -> T:
    """Run ``call(*args)`` on the stores' own thread (one for the whole server)."""
    global _thread
    if _thread is None:
        _thread = StoreThread()
    return await asyncio.get_running_loop().run_in_executor(_thread, partial(call, *args))


def write_update(store: Any, update: bytes, metadata: bytes) -> None:
    """Write ``update`` of ``store`` (a pycrdt-store ``SQLiteYStore``) in one transaction."""
    db = store._db._real_connection  # sqlite-anyio's connection, opened for any thread
    try:
        cursor = db.cursor()
        _squash_if_due(store, cursor, metadata)
        store._update_counter += 1
        if store.checkpoint_interval and store._update_counter >= store.checkpoint_interval:
            _checkpoint(store, cursor)
            store._update_counter = 0
        compressed = store._compress(update) if store._compress else update
        cursor.execute(
            "INSERT INTO yupdates VALUES (?, ?, ?, ?)",
            (store.path, compressed, metadata, time.time()),
        )
        db.commit()
    except BaseException:
        db.rollback()
        raise


def _squash_if_due(store: Any, cursor: Any, metadata: bytes) -> None:
    if store.squash_after_inactivity_of is None and store.document_ttl is not None:
        store.squash_after_inactivity_of = store.document_ttl
    idle_limit, history_limit = store.squash_after_inactivity_of, store.squash_history_older_than
    if idle_limit is None and history_limit is None:
        return
    cursor.execute(
        "SELECT MIN(timestamp), MAX(timestamp) FROM yupdates WHERE path = ?", (store.path,)
    )
    oldest, newest = cursor.fetchone() or (None, None)
    now = time.time()
    idle = idle_limit is not None and newest is not None and now - newest > idle_limit
    long = history_limit is not None and oldest is not None and now - oldest > history_limit
    last = store._cleaned_timestamp
    if not (idle or long) or (last is not None and now - last <= store.squash_no_more_often_than):
        return
    store._cleaned_timestamp = now
    older_than = now if idle else now - history_limit
    merged: Doc[Any] = Doc()
    cursor.execute(
        "SELECT yupdate FROM yupdates WHERE path = ? AND timestamp <= ? ORDER BY timestamp ASC",
        (store.path, older_than),
    )
    for (row,) in cursor.fetchall():
        if store._decompress:  # pycrdt-store applies only through its hook (ystore.py)
            merged.apply_update(store._decompress(row))
    cursor.execute(
        "DELETE FROM yupdates WHERE path = ? AND timestamp <= ?", (store.path, older_than)
    )
    squashed = merged.get_update()
    cursor.execute(
        "INSERT INTO yupdates VALUES (?, ?, ?, ?)",
        (
            store.path,
            store._compress(squashed) if store._compress else squashed,
            metadata,
            older_than,
        ),
    )


def _checkpoint(store: Any, cursor: Any) -> None:
    cursor.execute("SELECT checkpoint, timestamp FROM ycheckpoints WHERE path = ?", (store.path,))
    row = cursor.fetchone()
    document: Doc[Any] = Doc()
    since = 0.0
    if row:
        blob, since = row
        document.apply_update(store._decompress(blob) if store._decompress else blob)
    cursor.execute(
        "SELECT yupdate FROM yupdates WHERE path = ? AND timestamp >= ? ORDER BY timestamp ASC",
        (store.path, since),
    )
    for (update,) in cursor.fetchall():
        document.apply_update(store._decompress(update) if store._decompress else update)
    checkpoint = document.get_update()
    cursor.execute(
        "INSERT OR REPLACE INTO ycheckpoints (path, checkpoint, timestamp) VALUES (?, ?, ?)",
        (store.path, store._compress(checkpoint) if store._compress else checkpoint, time.time()),
    )
