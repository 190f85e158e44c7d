"""The run history: one SQLite row per run of a cell, kept within a count and a byte budget.

Recording must cost a trivial cell next to nothing, so :meth:`RunHistory.record` only
puts the entry on a queue; one writer thread inserts what has queued in one transaction,
trims the cells it touched to ``max_runs_per_cell`` and, now and then, the whole database
to ``max_bytes`` (oldest runs first). Rejected: writing on the event loop (an fsync per
run stalls every tab) and ``run_in_executor`` per run (a thread hop and a transaction
each). Sources are kept once per hash: a cell run 10,000 times unchanged stores its
source once.

The file is made owner-only before SQLite opens it; SQLite gives its ``-wal`` and
``-shm`` files the database file's mode.

Example:
    >>> import tempfile, time
    >>> from pathlib import Path
    >>> from jupyter_loop.execution.run_origin import RunEntry, RunOrigin
    >>> history = RunHistory(Path(tempfile.mkdtemp()) / "history.sqlite3")
    >>> now = time.time()
    >>> history.record(RunEntry("r", "a.ipynb", "c1", "run1", RunOrigin("alice", "tab"),
    ...     "h1", "1 + 1", "k1", "k1-start1", now, now, now, "ok", execution_count=1))
    >>> history.settle()
    >>> [(e.cell_id, e.origin.describe(), e.source) for e in history.runs("r", "c1")]
    [('c1', 'a tab of alice', '1 + 1')]
    >>> history.close()
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from pathlib import Path

from ..owner_only import open_private, private_dir
from ..state_files import DamagedFiles, open_or_set_aside, sqlite_check
from .run_origin import LastRun, RunEntry, RunOrigin

SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (hash TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY, room_id TEXT NOT NULL, path TEXT NOT NULL, cell_id TEXT NOT NULL,
    run_id TEXT NOT NULL, user TEXT NOT NULL, channel TEXT NOT NULL, turn TEXT NOT NULL,
    approval TEXT NOT NULL, client TEXT NOT NULL, run_all INTEGER NOT NULL,
    source_hash TEXT NOT NULL, kernel_id TEXT NOT NULL, kernel_run TEXT NOT NULL,
    queued REAL NOT NULL, started REAL, ended REAL NOT NULL, status TEXT NOT NULL, note TEXT,
    execution_count INTEGER, outputs_digest TEXT NOT NULL,
    taken_over INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS runs_by_cell ON runs (room_id, cell_id, seq);
CREATE TABLE IF NOT EXISTS last_runs (
    room_id TEXT NOT NULL, cell_id TEXT NOT NULL, source_hash TEXT NOT NULL,
    kernel_run TEXT NOT NULL, PRIMARY KEY (room_id, cell_id)) WITHOUT ROWID;
"""
COLUMNS = (
    "room_id, path, cell_id, run_id, user, channel, turn, approval, client, run_all, "
    "source_hash, kernel_id, kernel_run, queued, started, ended, status, note, execution_count, "
    "outputs_digest, taken_over"
)
ADDED_COLUMNS = {"taken_over": "INTEGER NOT NULL DEFAULT 0"}
"""Columns added since the first release: a database an older server made gets them
when it is opened (its runs read as not taken over)."""
BATCH_DELAY = 0.5
"""Seconds the writer gathers runs before writing them in one transaction. Writing each
run as it ended put the writer thread's share of the GIL in the middle of the next run's
start (+2.6 ms at the median of a trivial cell in ``bench/history.py``); a server that
dies loses at most this much of the history (the runs' outputs are journalled apart)."""
TRIM_FRACTION = 0.1
"""Share of the runs removed, oldest first, when the database is over its byte budget."""


class RunHistory:
    """Every run of every cell, in one database file (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        *,
        max_runs_per_cell: int = 1000,
        max_bytes: int = 64 * 1024 * 1024,
        log: logging.Logger | None = None,
        batch_delay: float = BATCH_DELAY,
        damaged: DamagedFiles | None = None,
    ) -> None:
        self.path = path
        self.batch_delay = batch_delay
        self.max_runs_per_cell = max_runs_per_cell
        self.max_bytes = max_bytes
        self._log = log or logging.getLogger(__name__)
        # A damaged file is moved aside and the history starts empty (``state_files``).
        self._writer_db = open_or_set_aside(path, self._open, damaged or DamagedFiles(self._log))
        self._read_lock = threading.Lock()
        self._reader_db = self._connect()
        self._reader_db.row_factory = sqlite3.Row
        self._queue: queue.SimpleQueue[RunEntry | threading.Event | None] = queue.SimpleQueue()
        # The write-ahead log's share of the budget: checkpointed at half of it, cut back
        # to it after each checkpoint (SQLite otherwise keeps a log file at its largest).
        self._wal_bytes = max(64 * 1024, min(4 * 1024 * 1024, max_bytes // 8))
        self._writer_db.execute(f"PRAGMA journal_size_limit = {self._wal_bytes}")
        (page,) = self._writer_db.execute("PRAGMA page_size").fetchone()
        self._writer_db.execute(f"PRAGMA wal_autocheckpoint = {self._wal_bytes // page // 2}")
        self._thread = threading.Thread(target=self._write_loop, name="run-history", daemon=True)
        self._thread.start()

    def _open(self, path: Path) -> sqlite3.Connection:
        private_dir(path.parent)
        if not path.exists():
            open_private(path, "ab").close()  # owner-only before SQLite creates its files
        db = self._connect()
        try:
            db.executescript(SCHEMA)
            _add_columns(db)
            sqlite_check(db)
        except BaseException:
            db.close()
            raise
        return db

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            # Before the first table: lets the clean-up give freed pages back to the disk.
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # WAL: a crash loses at most a batch
        except BaseException:
            db.close()
            raise
        return db

    # -- recording -------------------------------------------------------------------

    def record(self, entry: RunEntry) -> None:
        """Keep ``entry`` (written by the writer thread, soon)."""
        self._queue.put(entry)

    def settle(self, timeout: float = 10.0) -> None:
        """Block until everything recorded so far is written (for readers that must see it)."""
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=10)
        self._writer_db.close()
        with self._read_lock:
            self._reader_db.close()

    def _write_loop(self) -> None:
        while True:
            item = self._queue.get()
            batch: list[RunEntry] = []
            waiters: list[threading.Event] = []
            stop = False
            deadline = time.monotonic() + self.batch_delay
            while True:
                if item is None:
                    stop = True
                elif isinstance(item, threading.Event):
                    waiters.append(item)
                else:
                    batch.append(item)
                # Gather for ``batch_delay`` unless someone waits for the write: the thread
                # then takes the GIL once per batch, not in the middle of each run's end.
                wait = 0.0 if waiters or stop else deadline - time.monotonic()
                try:
                    item = self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                try:
                    self._write(batch)
                except sqlite3.Error as e:
                    self._log.warning("jupyter-loop could not record %d runs: %s", len(batch), e)
            for waiter in waiters:
                waiter.set()
            if stop:
                return

    def _write(self, batch: list[RunEntry]) -> None:
        db = self._writer_db
        db.execute("BEGIN")
        try:
            db.executemany(
                "INSERT OR IGNORE INTO sources (hash, text) VALUES (?, ?)",
                [(e.source_hash, e.source) for e in batch],
            )
            db.executemany(
                f"INSERT INTO runs ({COLUMNS}) VALUES ({', '.join('?' * 21)})",
                [_row(e) for e in batch],
            )
            db.executemany(  # in order: a cell's later run in the batch wins
                "INSERT INTO last_runs (room_id, cell_id, source_hash, kernel_run) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "source_hash = excluded.source_hash, kernel_run = excluded.kernel_run",
                [
                    (e.room_id, e.cell_id, e.source_hash, e.kernel_run)
                    for e in batch
                    if e.started is not None
                ],
            )
            for room_id, cell_id in {(e.room_id, e.cell_id) for e in batch}:
                db.execute(
                    "DELETE FROM runs WHERE seq IN (SELECT seq FROM runs WHERE room_id = ? AND "
                    "cell_id = ? ORDER BY seq DESC LIMIT -1 OFFSET ?)",
                    (room_id, cell_id, self.max_runs_per_cell),
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        # Pages, free ones included: a cell's trimmed runs leave free pages in the file.
        if self._page_bytes(live=False) > self._main_budget():  # pragmas: microseconds
            self.keep_byte_budget()
        elif self._wal_file_bytes() > self._wal_bytes:
            # A batch larger than the log's share leaves the file at that size until the
            # next write resets it: cut it back now, or the budget holds only on average.
            self._writer_db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def bytes_used(self) -> int:
        """Bytes the database takes on disk, its write-ahead log included."""
        return self.path.stat().st_size + self._wal_file_bytes()

    def _wal_file_bytes(self) -> int:
        try:
            return self.path.with_name(self.path.name + "-wal").stat().st_size
        except FileNotFoundError:
            return 0

    def keep_byte_budget(self) -> None:
        """Remove the oldest runs until the database fits ``max_bytes`` (writer thread, or
        when nothing records)."""
        db = self._writer_db
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        while self._page_bytes() > self._main_budget() * (1 - TRIM_FRACTION / 2):
            (count,) = db.execute("SELECT count(*) FROM runs").fetchone()
            if not count:
                break
            drop = max(1, int(count * TRIM_FRACTION))
            db.execute("BEGIN")
            db.execute(
                "DELETE FROM runs WHERE seq IN (SELECT seq FROM runs ORDER BY seq LIMIT ?)",
                (drop,),
            )
            db.execute(
                "DELETE FROM sources WHERE hash NOT IN (SELECT DISTINCT source_hash FROM runs)"
            )
            db.execute("COMMIT")
        # Through sqlite3_exec: the module steps a pragma once, and each step frees one page.
        db.executescript("PRAGMA incremental_vacuum;")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _main_budget(self) -> int:
        """Bytes the database file's pages may take (the log has the rest of the budget)."""
        return self.max_bytes - self._wal_bytes

    def _page_bytes(self, *, live: bool = True) -> int:
        """Bytes of the database's pages: those in use, or (``live=False``) all of them."""
        db = self._writer_db
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        (free,) = db.execute("PRAGMA freelist_count").fetchone() if live else (0,)
        (size,) = db.execute("PRAGMA page_size").fetchone()
        return int((pages - free) * size)

    # -- asking ----------------------------------------------------------------------

    def runs(self, room_id: str, cell_id: str | None = None, limit: int = 100) -> list[RunEntry]:
        """The runs of a notebook (or of one cell), newest first, at most ``limit``."""
        where, args = "r.room_id = ?", [room_id]
        if cell_id is not None:
            where += " AND r.cell_id = ?"
            args.append(cell_id)
        query = (
            f"SELECT {', '.join('r.' + c.strip() for c in COLUMNS.split(','))}, s.text "
            f"FROM runs r LEFT JOIN sources s ON s.hash = r.source_hash WHERE {where} "
            "ORDER BY r.seq DESC LIMIT ?"
        )
        with self._read_lock:
            rows = self._reader_db.execute(query, (*args, max(0, limit))).fetchall()
        return [_entry(row) for row in rows]

    def last_runs(self, room_id: str) -> dict[str, LastRun]:
        """Per cell of the notebook, the last run the kernel had (its outputs' origin).

        Kept in a table of its own, one row per cell: asked at every ``read_notebook`` and
        turn step, it must not scan the runs (12 ms for 10,000 runs of one cell, against
        well under 1 ms), and it outlives the clean-up of old runs."""
        with self._read_lock:
            rows = self._reader_db.execute(
                "SELECT cell_id, source_hash, kernel_run FROM last_runs WHERE room_id = ?",
                (room_id,),
            ).fetchall()
        return {row[0]: LastRun(row[1], row[2]) for row in rows}

    def has_run(self, room_id: str, cell_id: str, run_id: str) -> bool:
        """Whether the history holds this run (written, not only recorded)."""
        with self._read_lock:
            row = self._reader_db.execute(
                "SELECT 1 FROM runs WHERE room_id = ? AND cell_id = ? AND run_id = ? LIMIT 1",
                (room_id, cell_id, run_id),
            ).fetchone()
        return row is not None

    def count(self) -> int:
        with self._read_lock:
            (count,) = self._reader_db.execute("SELECT count(*) FROM runs").fetchone()
        return int(count)


def _add_columns(db: sqlite3.Connection) -> None:
    have = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    for name, kind in ADDED_COLUMNS.items():
        if name not in have:
            db.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind}")


def _row(e: RunEntry) -> tuple[object, ...]:
    o = e.origin
    return (
        e.room_id, e.path, e.cell_id, e.run_id, o.user, o.channel, o.turn, o.approval,
        o.client, int(o.run_all), e.source_hash, e.kernel_id, e.kernel_run, e.queued,
        e.started, e.ended, e.status, e.note, e.execution_count, e.outputs_digest,
        int(e.taken_over),
    )  # fmt: skip


def _entry(row: sqlite3.Row) -> RunEntry:
    origin = RunOrigin(
        row["user"], row["channel"], row["turn"], row["approval"], row["client"],
        bool(row["run_all"]),
    )  # fmt: skip
    return RunEntry(
        room_id=row["room_id"],
        path=row["path"],
        cell_id=row["cell_id"],
        run_id=row["run_id"],
        origin=origin,
        source_hash=row["source_hash"],
        source=row["text"] or "",
        kernel_id=row["kernel_id"],
        kernel_run=row["kernel_run"],
        queued=row["queued"],
        started=row["started"],
        ended=row["ended"],
        status=row["status"],
        note=row["note"],
        execution_count=row["execution_count"],
        outputs_digest=row["outputs_digest"],
        taken_over=bool(row["taken_over"]),
    )
