"""A YStore that stays small under notebooks that print a lot.

jupyter-collaboration keeps every Y update of a document in its SQLite store unless told
otherwise, and a cell that prints adds its outputs' updates on every run: a 100,000-line
loop grew the store by about 85 KB per run, for good. This store is jupyter-collaboration's
own ``SQLiteYStore`` with the store's own squashing switched on: on a write, history older
than ``squash_history_older_than`` seconds is merged into one update, at most every
``squash_no_more_often_than`` seconds. So a store holds each document once plus, for each,
the updates of at most its last 15 seconds (by default) of activity, however many runs came
before (a document left alone keeps that window until its next write). The file shrinks
as rows go (pycrdt-store creates it with ``auto_vacuum = FULL``).

Undo in a tab does not read the store (it lives in the tab, and a squash keeps every item's
identity), so only jupyter-collaboration's timeline of older states is coarser.

Each write of pycrdt-store's SQLite store takes several trips to a worker thread (a cursor,
the squash check, the insert, the commit), each costing the server's event loop time that
grows with its number of tasks; the room writes once per document transaction. So the
updates of ``write_interval`` seconds are merged into one (Y updates merge losslessly)
and written together: a Run All writes a few times a second instead of once per cell. The
file, not the store, holds a notebook: a store a moment behind after a crash is brought
up to date from the file when the room is loaded again, as jupyter-collaboration does.

A room writes into its document before it observes it (the path when it is made; on the
JupyterLab 4.5 line also ``dirty`` once loaded): when the stored document matches the
file, nothing writes those first structs of the room's client to the store, and every
later update of that client (a save's hash, all of jupyter-loop's outputs) hangs on them
in Yjs after the next restart, while pycrdt shows it (a tab opens blank). So the room's
first observed update is stored together with everything the room's client wrote before
it, and a stored document with such holes (written before this was so) is dropped and
the room loads from the file: ``docs/upstream/room-first-write.md`` has the minimal
reproduction.

A store file truncated inside a page passes SQLite's checks, and SQLite reads its lost
bytes as zeros: a row's update then ends in zeros, which pycrdt applies in part without a
word, or panics on (pycrdt-store logs the panic and loads half a document; every later
squash of that document panics too, so nothing more of it is stored). A stored row that
does not read whole drops the document's stored history as a hole does (chaos seed 2034,
trial 0; ``docs/upstream/store-row-cut-short.md``).

A store says when it holds a document as it is (:meth:`CompactSQLiteYStore.holds`): it
keeps the state vector of what it wrote. A restarted server closes the runs the previous
process left in flight, and lets a run's line leave its run ledger only once the store
holds the close: otherwise a kill inside ``write_interval`` left a cell ``[*]`` with
nothing to close it (chaos seed 2031, trial 151).

pycrdt-store applies the updates it squashes only through its decompression hook, so
without one a squash would store an empty document: the store registers identity hooks
(compression itself is not used, as pycrdt-store 0.1.5 loads rooms without decompressing).

Example:
    >>> unchanged(b"an update")
    b'an update'
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from contextlib import closing
from logging import Logger
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup
from jupyter_server.serverapp import ServerApp
from jupyter_server_ydoc.stores import SQLiteYStore
from pycrdt import Doc, merge_updates
from pycrdt.store import YDocNotFound
from traitlets import Float, Int
from traitlets.config import Config

from . import store_rows
from .document.update_holes import (
    UnreadableUpdate,
    check_whole,
    holes,
    own_structs,
    state_after,
    state_vector,
)


def unchanged(update: bytes) -> bytes:
    return update


def choose_compact_store(config: Config) -> None:
    """Make the compact store jupyter-collaboration's, unless the user chose a store.

    Jupyter reads only the extensions to enable from ``jupyter_server_config.d``, so the
    choice is made here, in the server's configuration, when jupyter-loop is linked: the
    server links its extensions in the order of their names, ``jupyter_server_ydoc`` after
    ``jupyter_loop``, and it reads ``YDocExtension.ystore_class`` when it is linked.

    Example:
        >>> config = Config()
        >>> choose_compact_store(config)
        >>> config.YDocExtension.ystore_class
        'jupyter_loop.ystore.CompactSQLiteYStore'
        >>> chosen = Config({"YDocExtension": {"ystore_class": "my.Store"}})
        >>> choose_compact_store(chosen)
        >>> chosen.YDocExtension.ystore_class
        'my.Store'
    """
    if "ystore_class" not in config.YDocExtension:
        config.YDocExtension.ystore_class = f"{__name__}.{CompactSQLiteYStore.__name__}"


def set_aside_unreadable_store(config: Config, log: Logger) -> Path | None:
    """Move the collaboration store aside when SQLite cannot read it; return where to.

    A store cut short (a full disk, a copy taken mid-write, a truncated file) stays
    "malformed" for the server's whole life: every write fails, every room loads from its
    file with a history of its own, and a tab that reconnects after its room was freed
    merges two histories of the same cells (duplicated or garbled text, found by
    ``bench/chaos.py``). The store is a cache of the files, so a fresh one loses nothing
    the files hold; the old one is kept beside it for a look.

    Example:
        >>> import logging, tempfile
        >>> broken = Path(tempfile.mkdtemp()) / "store.db"
        >>> _ = broken.write_bytes(b"SQLite format 3" + bytes(101))  # a header, then nothing
        >>> config = Config({"SQLiteYStore": {"db_path": str(broken)}})
        >>> aside = set_aside_unreadable_store(config, logging.getLogger("doctest"))
        >>> broken.exists(), aside.name.startswith("store.db.unreadable-")
        (False, True)
    """
    configured = config.CompactSQLiteYStore.get("db_path") or config.SQLiteYStore.get("db_path")
    path = Path(configured or SQLiteYStore.db_path.default_value)
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        with closing(sqlite3.connect(path)) as db:
            if db.execute("PRAGMA quick_check").fetchone()[0] == "ok":
                return None
    except sqlite3.DatabaseError:
        pass
    aside = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
    for suffix in ("", "-journal", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            os.replace(part, aside.with_name(aside.name + suffix))
    log.warning(
        "jupyter-loop: the collaboration store %s cannot be read; it was moved to %s and a "
        "new one is started (the notebooks' files are whole).",
        path,
        aside,
    )
    return aside


class _CheckedRows(Doc):
    """A document the stored rows are applied to that applies only rows that read whole,
    and says which did not.

    A row cut short can make pycrdt panic, and pycrdt-store's database context logs the
    panic and carries on with half a document; checking each row as it is applied (not
    re-reading the rows ourselves) keeps pycrdt-store's own order and checkpoints."""

    def __init__(self) -> None:
        super().__init__()
        self.unreadable: list[str] = []

    def apply_update(self, update: bytes) -> None:
        try:
            check_whole(update)
        except UnreadableUpdate as e:
            self.unreadable.append(str(e))
            return
        super().apply_update(update)


class CompactSQLiteYStore(SQLiteYStore):
    """jupyter-collaboration's SQLite store with bounded history."""

    writes_waiting = 0
    """Updates of this room handed to the store and not yet written (batched, or waiting
    for the database). ``GET status`` reports their sum over the server's rooms (the
    module's :func:`writes_waiting`): a queue that keeps growing is a store that cannot
    keep up.
    A count per store, not per class: a class count outlived a server whose loop closed
    with a write pending (pytest's servers share a process) and never came back to 0."""

    stores_first_writes = True
    """It stores what a room wrote before observing its document (see :meth:`write`)."""

    squash_history_older_than = Int(
        10,
        allow_none=True,
        config=True,
        help=(
            "Seconds of document history kept update by update (default 10); older history "
            "is merged into one update. None keeps every update."
        ),
    )

    squash_no_more_often_than = Int(
        5, config=True, help="Seconds between two squashes of a document's history (default 5)."
    )

    write_interval = Float(
        0.1,
        config=True,
        help=(
            "Seconds a document's updates wait to be written to the store together "
            "(default 0.1); 0 writes each on its own, as jupyter-collaboration does."
        ),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("config") is None and ServerApp.initialized():
            # jupyter-collaboration builds the store of a room opened on the server (its
            # ``get_document``, as jupyter-loop opens a notebook no tab has open) without
            # the server's configuration: its ``db_path`` would be the default file in the
            # server's working directory, a database of its own beside the configured one.
            kwargs["config"] = ServerApp.instance().config
        super().__init__(*args, **kwargs)
        self.register_compression_callbacks(unchanged, unchanged)
        self._waiting: list[bytes] = []
        self.writes_waiting = 0
        self._room_document: Doc[Any] | None = None
        self._stored: dict[int, int] = {}  # the state vector of what is written
        self._observed = False  # the room gave an update it observed

    async def holds(self, ydoc: Doc[Any], timeout: float) -> bool:
        """Wait until the store holds every struct ``ydoc`` has now; False after
        ``timeout`` seconds (a store that does not write, or a write that failed)."""
        wanted = state_vector(ydoc.get_state())  # not the whole document encoded
        deadline = time.monotonic() + timeout
        while any(self._stored.get(client, 0) < clock for client, clock in wanted.items()):
            if time.monotonic() > deadline:
                return False
            await anyio.sleep(0.02)
        return True

    def _wrote(self, update: bytes) -> None:
        # Not ``state_vector(update)``: a write that follows others starts past clock 0,
        # and pycrdt's state of such an update is empty (the store never held a document
        # after its first change, and each restart waited out ``holds``' timeout).
        self._stored = state_after(self._stored, update)

    async def apply_updates(self, ydoc: Doc) -> None:
        """Load the stored document into the room's.

        Raises ``YDocNotFound`` (the room then loads the file) when nothing is stored, or
        when the stored document lacks structs it builds on: Yjs would hold them back.
        """
        self._room_document = ydoc
        stored = _CheckedRows()
        await super().apply_updates(stored)
        if stored.unreadable:
            self.log.warning(
                "jupyter-loop: %d stored update(s) of %s do not read whole (%s); the stored "
                "history is dropped and the document is loaded from its file.",
                len(stored.unreadable),
                self.path,
                stored.unreadable[0],
            )
            await self._forget_document()
            raise YDocNotFound
        state = stored.get_update()
        missing = holes(state)
        if missing:
            self.log.warning(
                "jupyter-loop: the stored history of %s lacks %d range(s) of updates a browser "
                "would wait for; it is dropped and the document is loaded from its file.",
                self.path,
                len(missing),
            )
            await self._forget_document()
            raise YDocNotFound
        ydoc.apply_update(state)
        self._wrote(state)

    async def encode_state_as_update(self, ydoc: Doc) -> None:
        """Store the room's whole document (it was loaded from its file)."""
        self._room_document = ydoc
        await self._write_batched(ydoc.get_update())

    async def _forget_document(self) -> None:
        """Delete this document's stored history (and its checkpoint, where kept)."""
        async with self.lock:
            async with self._db:
                cursor = await self._db.cursor()
                await cursor.execute("DELETE FROM yupdates WHERE path = ?", (self.path,))
                tables = await cursor.execute(
                    "SELECT name FROM sqlite_master WHERE name = 'ycheckpoints'"
                )
                if await tables.fetchall():
                    await cursor.execute("DELETE FROM ycheckpoints WHERE path = ?", (self.path,))

    async def write(self, data: bytes) -> None:
        """Store an update the room observed; the first carries what came before it.

        The first update a room observes is stored with every struct the room's own
        client wrote before (see the module's docstring): a few bytes of state, or the
        notebook when the room loaded it from its file (a copy the squash folds away).
        """
        self._observed = True
        await self._write_batched(data)

    def take(self, update: bytes, tasks: TaskGroup) -> None:
        """Take an update to store without a task of its own (as :meth:`write` stores it).

        pycrdt-websocket's room starts an anyio task per update to call :meth:`write`;
        jupyter-loop's rooms (``send_at_commit``) hand it here instead: the update joins
        the batch waiting, and only the update that opens a batch starts a task in the
        room's ``tasks`` (so a room stopping still gets the batch written). A printing
        cell makes an update per output flush of each notebook: at 20 notebooks, the
        per-update tasks were a tenth of the server's event loop (py-spy, bench/capacity.py).
        """
        self._observed = True  # (its first structs are merged when written: not in here,
        # the transaction that made the update is still open)
        if self.write_interval <= 0:
            tasks.start_soon(self._write_when_started, update)
        elif self._wait(update):
            tasks.start_soon(self._write_after_interval, True)

    def _with_first_structs(self, data: bytes) -> bytes:
        if self._observed and self._room_document is not None:
            data = merge_updates(own_structs(self._room_document), data)
            self._room_document = None
        return data

    async def _write_when_started(self, data: bytes) -> None:
        await self.started.wait()
        await self._write_batched(data)

    def _wait(self, data: bytes) -> bool:
        """Put an update in the batch waiting; True when it opens the batch."""
        self._waiting.append(data)
        self.writes_waiting += 1
        return len(self._waiting) == 1

    async def _write_batched(self, data: bytes) -> None:
        """Store an update with those that come within ``write_interval`` seconds.

        The room runs each write as a task of its own: the first of a batch waits and
        writes them all; a room stopping meanwhile still gets them written.
        """
        if self.write_interval <= 0:
            self.writes_waiting += 1
            try:
                await self._write_one(data)
            finally:
                self.writes_waiting -= 1
            return
        if self._wait(data):
            await self._write_after_interval(False)

    async def _write_after_interval(self, until_started: bool) -> None:
        try:
            if until_started:
                await self.started.wait()
            await anyio.sleep(self.write_interval)
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await self._write_waiting()
                except Exception as e:  # a store closed under us: the file holds the notebook
                    self.log.warning("jupyter-loop could not write to the YStore: %s", e)

    async def _write_waiting(self) -> None:
        updates, self._waiting = self._waiting, []
        try:
            if updates:
                await self._write_one(updates[0] if len(updates) == 1 else merge_updates(*updates))
        finally:
            self.writes_waiting -= len(updates)

    async def _write_one(self, update: bytes) -> None:
        """Write one update as pycrdt-store's ``write`` does, in one trip to the store's
        own thread (see :mod:`jupyter_loop.store_rows`) rather than its five or more trips
        through anyio's worker threads (a cursor, the squash check and its row, the
        insert, the commit), each of which made anyio search every task of the server's
        loop for a root task it never finds under jupyter_server (py-spy: 8 % of the loop
        at 20 printing notebooks, 20 % for stock's store). A configured size cleanup,
        which this does not do, takes pycrdt-store's own path."""
        update = self._with_first_structs(update)
        if self.cleanup_when_db_size_above or self.db_initialized is None:
            await super().write(update)  # (not started: pycrdt-store says so)
        else:
            await self.db_initialized.wait()
            metadata = await self.get_metadata()
            async with self.lock:
                await store_rows.in_store_thread(store_rows.write_update, self, update, metadata)
        self._wrote(update)


def writes_waiting(rooms: Iterable[Any]) -> int:
    """The updates the stores of ``rooms`` hold and have not written yet: the server's
    write queue (a room without a jupyter-loop store counts none)."""
    return sum(getattr(room.ystore, "writes_waiting", 0) for room in rooms)
