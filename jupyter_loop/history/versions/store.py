"""The versions of each notebook the server saved, in one SQLite file, within bounds.

A version is the notebook file's bytes as a save left them (or as the server found them on
disk before a save replaced them), compressed with zlib. The store keeps at most
``max_per_notebook`` versions of each notebook and ``max_bytes`` of compressed content in
all; over either bound the oldest go first, but never a notebook's newest version (the
one a restore would be undone with).

A save that changes only outputs or metadata (a cell printing while it runs, saved every
few seconds) updates the newest version instead of adding one, while that version is less
than ``MERGE_SECONDS`` old: a long run would otherwise push every older version out within
minutes. A change to any cell's id, type or source always adds a version, so an accidental
Delete All, a bad merge or an overwrite never replaces the version before it.

Rejected: the run history's database (``history.sqlite3``). One file would tie the two
byte budgets together (the history's clean-up measures the whole file, so a large
notebook's versions would push runs out), and ``history = False`` turns the run history
off while versions must stay. The file is made owner-only before SQLite opens it, as the
history's is.

Methods block (SQLite, zlib); the server calls them from one worker thread, in order.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> store = VersionStore(Path(tempfile.mkdtemp()) / "versions.sqlite3", max_per_notebook=2)
    >>> nb = lambda *sources: ('{"cells": [%s]}' % ", ".join(
    ...     '{"id": "c%d", "cell_type": "code", "source": "%s", "outputs": []}' % (i, s)
    ...     for i, s in enumerate(sources))).encode()
    >>> [store.add("a.ipynb", nb(s), SAVED, now=t) is not None
    ...  for t, s in [(1.0, "x = 1"), (2.0, "x = 2"), (3.0, "x = 3")]]
    [True, True, True]
    >>> [(v.number, v.cells) for v in store.versions("a.ipynb")]  # newest first, two kept
    [(3, 1), (2, 1)]
    >>> store.add("a.ipynb", nb("x = 3"), SAVED, now=4.0) is None  # same bytes: nothing new
    True
    >>> store.content("a.ipynb", 2) == nb("x = 2")
    True
    >>> store.close()
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...owner_only import open_private, private_dir
from ...state_files import DamagedFiles, open_or_set_aside, sqlite_check

SAVED = "saved"
"""A save the server made (a tab's Save, the room's autosave, jupyter-loop's saves)."""
ON_DISK = "found on disk"
"""The file as the server found it before a save replaced it: written by someone else."""
RESTORED = "restored"
"""The save a restore made (``restored_from``: the version it brought back)."""
KINDS = (SAVED, ON_DISK, RESTORED)

MERGE_SECONDS = 60.0
"""How long the newest version absorbs saves that change no cell's id, type or source."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    number INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, kind TEXT NOT NULL,
    restored_from INTEGER, created REAL NOT NULL, saved REAL NOT NULL,
    sha256 TEXT NOT NULL, cells_digest TEXT NOT NULL, cells INTEGER NOT NULL,
    size INTEGER NOT NULL, stored INTEGER NOT NULL, content BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS versions_by_path ON versions (path, number);
"""
FIELDS = "number, path, kind, restored_from, created, saved, sha256, cells, size"


@dataclass(frozen=True)
class Version:
    """One kept version of a notebook (its content is read apart: :meth:`VersionStore.content`).

    ``number`` names it for good (``jupyter loop restore NOTEBOOK NUMBER``): numbers grow
    across all notebooks and are never reused. ``created``/``saved``: when it was first
    and last written (a version absorbs saves of outputs only, see the module docstring).
    """

    number: int
    path: str
    kind: str
    restored_from: int | None
    created: float
    saved: float
    sha256: str
    cells: int
    size: int

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "path": self.path,
            "kind": self.kind,
            "restored_from": self.restored_from,
            "created": self.created,
            "saved": self.saved,
            "sha256": self.sha256,
            "cells": self.cells,
            "size": self.size,
        }


Digest = tuple[str, int]
"""A digest of a notebook's cells' ids, types and sources (not outputs), and its cell count."""


def cells_digest(content: bytes) -> Digest:
    """The :data:`Digest` of a notebook file; ``("", 0)`` for one that is not a notebook.

    Example:
        >>> a = cells_digest(b'{"cells": [{"id": "c0", "source": "1", "outputs": [1]}]}')
        >>> b = cells_digest(b'{"cells": [{"id": "c0", "source": ["1"], "outputs": []}]}')
        >>> a == b, a[1], cells_digest(b"not json")
        (True, 1, ('', 0))
        >>> shape_digest([{"id": "c0", "source": "1"}]) == a
        True
    """
    try:
        cells = json.loads(content).get("cells")
    except (ValueError, AttributeError):
        return "", 0
    return shape_digest(cells)


def shape_digest(cells: Any) -> Digest:
    """The :data:`Digest` of a notebook's cells as a list of dicts (a save's model): a
    saver that has them passes this, so the file need not be parsed again (64 ms, the
    interpreter held, for a 9 MB notebook)."""
    if not isinstance(cells, list):
        return "", 0
    shape = [
        [c.get("id"), c.get("cell_type"), _text(c.get("source"))]
        for c in cells
        if isinstance(c, dict)
    ]
    return hashlib.sha256(json.dumps(shape).encode()).hexdigest(), len(shape)


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source or "")


class VersionStore:
    """Kept versions of notebooks (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        *,
        max_per_notebook: int = 50,
        max_bytes: int = 256 * 1024 * 1024,
        log: logging.Logger | None = None,
        damaged: DamagedFiles | None = None,
    ) -> None:
        self.path = path
        self.max_per_notebook = max_per_notebook
        self.max_bytes = max_bytes
        self._log = log or logging.getLogger(__name__)
        self._lock = threading.Lock()
        # A damaged file is moved aside and the store starts empty (``state_files``).
        self._db = open_or_set_aside(path, self._open, damaged or DamagedFiles(self._log))

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        private_dir(path.parent)
        if not path.exists():
            open_private(path, "ab").close()  # owner-only before SQLite creates its files
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # before the first table
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.executescript(SCHEMA)
            sqlite_check(db)
            (mode,) = db.execute("PRAGMA auto_vacuum").fetchone()
            if mode != 2:  # made before it was incremental: free pages never went back
                db.execute("PRAGMA auto_vacuum = INCREMENTAL")
                db.execute("VACUUM")
        except BaseException:
            db.close()
            raise
        return db

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- keeping -----------------------------------------------------------------------

    def add(
        self,
        path: str,
        content: bytes,
        kind: str = SAVED,
        *,
        restored_from: int | None = None,
        now: float | None = None,
        digest: Digest | None = None,
    ) -> Version | None:
        """Keep ``content`` as the newest version of ``path``; ``None`` if it is the newest
        already (same bytes). A save of outputs only may update the newest version instead
        (see the module docstring); the limits are kept afterwards. ``digest``: the cells'
        :func:`shape_digest` if the caller has it (else the content is parsed for it)."""
        now = time.time() if now is None else now
        sha = hashlib.sha256(content).hexdigest()  # hashlib and zlib let other threads run
        if self.newest_sha(path) == sha:
            return None
        shape, cells = digest if digest is not None else cells_digest(content)
        packed = zlib.compress(content, 6)
        with self._lock:
            newest = self._db.execute(
                "SELECT number, kind, created, sha256, cells_digest FROM versions "
                "WHERE path = ? ORDER BY number DESC LIMIT 1",
                (path,),
            ).fetchone()
            if newest is not None and newest[3] == sha:
                return None
            self._db.execute("BEGIN")
            try:
                if (
                    newest is not None
                    and kind == SAVED
                    and newest[1] == SAVED
                    and shape
                    and newest[4] == shape
                    and now - newest[2] < MERGE_SECONDS
                ):
                    number = int(newest[0])
                    self._db.execute(
                        "UPDATE versions SET saved = ?, sha256 = ?, size = ?, stored = ?, "
                        "content = ? WHERE number = ?",
                        (now, sha, len(content), len(packed), packed, number),
                    )
                else:
                    cursor = self._db.execute(
                        "INSERT INTO versions (path, kind, restored_from, created, saved, "
                        "sha256, cells_digest, cells, size, stored, content) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (path, kind, restored_from, now, now, sha, shape, cells,
                         len(content), len(packed), packed),
                    )  # fmt: skip
                    number = int(cursor.lastrowid or 0)
                self._keep_limits(path)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._shrink()
            return self._version(number)

    def _shrink(self) -> None:
        """Give the disk back what the limits freed: the file's free pages, and the
        write-ahead log, which SQLite otherwise keeps at its largest (a 16 MB version
        left 5.5 MB of log beside a store capped at 4 MiB)."""
        self._db.executescript("PRAGMA incremental_vacuum;")
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def _keep_limits(self, path: str) -> None:
        """Drop ``path``'s versions beyond the count, then the oldest of all (never a
        notebook's newest) while the content is over the byte budget."""
        self._db.execute(
            "DELETE FROM versions WHERE number IN (SELECT number FROM versions WHERE path = ? "
            "ORDER BY number DESC LIMIT -1 OFFSET ?)",
            (path, max(1, self.max_per_notebook)),
        )
        (total,) = self._db.execute("SELECT coalesce(sum(stored), 0) FROM versions").fetchone()
        if total <= self.max_bytes:
            return
        removable = self._db.execute(
            "SELECT number, stored FROM versions WHERE number NOT IN "
            "(SELECT max(number) FROM versions GROUP BY path) ORDER BY number"
        ).fetchall()
        gone = []
        for number, stored in removable:
            if total <= self.max_bytes:
                break
            gone.append((number,))
            total -= stored
        self._db.executemany("DELETE FROM versions WHERE number = ?", gone)
        if total > self.max_bytes:
            self._log.warning(
                "jupyter-loop keeps only the newest version of each notebook, and they take "
                "%d bytes, over versions_max_bytes (%d)",
                total,
                self.max_bytes,
            )

    # -- asking ------------------------------------------------------------------------

    def versions(self, path: str) -> list[Version]:
        """The kept versions of ``path``, newest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {FIELDS} FROM versions WHERE path = ? ORDER BY number DESC", (path,)
            ).fetchall()
        return [Version(*row) for row in rows]

    def version(self, path: str, number: int) -> Version | None:
        with self._lock:
            return self._version(number, path)

    def _version(self, number: int, path: str | None = None) -> Version | None:
        row = self._db.execute(
            f"SELECT {FIELDS} FROM versions WHERE number = ?", (number,)
        ).fetchone()
        if row is None or (path is not None and row[1] != path):
            return None
        return Version(*row)

    def content(self, path: str, number: int) -> bytes | None:
        """The bytes of version ``number`` of ``path`` (``None``: no such version)."""
        with self._lock:
            row = self._db.execute(
                "SELECT content FROM versions WHERE number = ? AND path = ?", (number, path)
            ).fetchone()
        return None if row is None else zlib.decompress(row[0])

    def newest_sha(self, path: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT sha256 FROM versions WHERE path = ? ORDER BY number DESC LIMIT 1",
                (path,),
            ).fetchone()
        return None if row is None else str(row[0])

    def bytes_stored(self) -> int:
        """Compressed bytes of every kept version (what ``max_bytes`` bounds)."""
        with self._lock:
            (total,) = self._db.execute("SELECT coalesce(sum(stored), 0) FROM versions").fetchone()
        return int(total)
