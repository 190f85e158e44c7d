"""Open a state file, or move it aside when it is damaged and start the feature empty.

The data directory holds one file per feature (the run history, the kept versions, the
runs in flight, each kept kernel's entry, the scoped tokens). A file that cannot be read
(a full disk, a copy taken mid-write, an edit by hand, another version's format) must cost
that feature its past and nothing else: before, one damaged file stopped the extension
from loading (every route 404) while kernels still started under keepers. So every store
opens its file through :func:`open_or_set_aside`: when reading it raises one of
:data:`DAMAGE`, the file (and SQLite's ``-wal``, ``-shm`` and ``-journal`` beside it) is
renamed ``NAME.damaged-<time>`` in the same directory, kept for the user, named in the log
and in ``GET /api/jupyter-loop/status`` (:class:`DamagedFiles`), and opened again: missing,
it is made new.

Errors that say nothing about the file's content are not damage and are raised: a file
we may not read, a full disk, a database another process holds locked
(``sqlite3.OperationalError``). Rejected: deleting the file (what it held may matter to
its user: it is theirs to look at) and repairing it (each store would need its own
salvage, for a file that should never be damaged).

Example:
    >>> import json, logging, tempfile
    >>> path = Path(tempfile.mkdtemp()) / "tokens.json"
    >>> _ = path.write_text("{not json")
    >>> damaged = DamagedFiles(logging.getLogger("doctest"))
    >>> def load(p):
    ...     return json.loads(p.read_text()) if p.exists() else []
    >>> open_or_set_aside(path, load, damaged)
    []
    >>> [(Path(d.file).name, Path(d.moved_to).name.startswith("tokens.json.damaged-"))
    ...  for d in damaged.listed()]
    [('tokens.json', True)]
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

SIDE_FILES = ("", "-wal", "-shm", "-journal")
"""A file and what SQLite keeps beside it: moved aside together."""


class Damaged(ValueError):
    """A state file read whole but holds what its store never writes (a wrong type)."""


DAMAGE: tuple[type[BaseException], ...] = (
    ValueError,  # JSON that does not parse, bytes that do not decode, Damaged
    TypeError,  # JSON of another shape
    KeyError,
    AttributeError,
    sqlite3.DatabaseError,  # "file is not a database", "database disk image is malformed"
)


def is_damage(error: BaseException) -> bool:
    """Whether ``error`` says the file's content is damaged (see the module docstring)."""
    if isinstance(error, sqlite3.OperationalError):
        return False  # locked, busy, cannot open: the file may be sound
    return isinstance(error, DAMAGE)


@dataclass(frozen=True)
class SetAside:
    """A damaged state file and where it was moved (kept for its user)."""

    file: str
    moved_to: str
    reason: str
    when: float

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "moved_to": self.moved_to, "reason": self.reason,
                "when": self.when}  # fmt: skip


class DamagedFiles:
    """The state files this server moved aside since it started (``GET status`` lists
    them: the log may be long gone when someone wonders where a history went)."""

    def __init__(self, log: logging.Logger | None = None) -> None:
        self._log = log or logging.getLogger(__name__)
        self._lock = threading.Lock()
        self._items: list[SetAside] = []

    def listed(self) -> list[SetAside]:
        with self._lock:
            return list(self._items)

    def set_aside(self, path: Path, reason: str) -> SetAside:
        """Rename ``path`` (and its SQLite side files) to ``NAME.damaged-<time>``."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = path.with_name(f"{path.name}.damaged-{stamp}")
        number = 1
        while aside.exists():  # two in one second: keep both
            number += 1
            aside = path.with_name(f"{path.name}.damaged-{stamp}-{number}")
        for suffix in SIDE_FILES:
            part = path.with_name(path.name + suffix)
            if part.exists():
                os.replace(part, aside.with_name(aside.name + suffix))
        noted = SetAside(str(path), str(aside), reason, time.time())
        with self._lock:
            self._items.append(noted)
        self._log.warning(
            "jupyter-loop: %s is damaged (%s); it was moved to %s and the feature starts empty",
            path,
            reason,
            aside,
        )
        return noted


def describe(error: BaseException) -> str:
    """One line saying what was wrong with the file."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200]}" if text else type(error).__name__


def open_or_set_aside(path: Path, open_it: Callable[[Path], T], damaged: DamagedFiles) -> T:
    """``open_it(path)``; when it fails on damage, move ``path`` aside and open it again
    (a store's opener makes a missing file new). Anything else it raises goes through."""
    try:
        return open_it(path)
    except Exception as error:
        if not is_damage(error) or not path.exists():
            raise
        damaged.set_aside(path, describe(error))
    return open_it(path)


def sqlite_check(db: sqlite3.Connection) -> None:
    """Raise :class:`sqlite3.DatabaseError` unless SQLite reads the whole database.

    ``quick_check`` reads every page (a file cut short passes the opening and fails at
    the first query that reaches its missing pages), without the index checks of
    ``integrity_check``."""
    rows = db.execute("PRAGMA quick_check").fetchall()
    if [tuple(row) for row in rows] != [("ok",)]:
        raise sqlite3.DatabaseError(f"database disk image is malformed: {rows[0][0]}")


def expect(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    """``value`` if it is of ``kind`` (a bool is not a number here), else :class:`Damaged`."""
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise Damaged(f"'{name}' is {value!r}")
    if not isinstance(value, kind):
        raise Damaged(f"'{name}' is {type(value).__name__}, not the expected type")
    return value
