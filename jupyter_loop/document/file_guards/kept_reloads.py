"""The marks of a notebook's reloads from its file, kept on disk across server restarts.

A tab that was away while its notebook's file replaced the notebook (``file_reloads``)
may come back after the server restarted: its laptop was closed over a ``git pull`` and
a server upgrade. The store still holds the reload (the new server's room is built from
it), but a mark only in memory is gone, and the tab's offline lines would merge into the
checked-out code as if nothing had replaced it. So each mark is also written here, and a
notebook whose marks are not in memory reads them back at the first tab that returns.

Layout: ``{root}/{file_id}/{n}-{client}-{clock}``, one file per reload, holding the
notebook before it (a Y update); ``n`` orders them (nanoseconds of the write). A notebook
keeps its newest :data:`file_reloads.RELOADS_KEPT`, and all notebooks together at most
``max_bytes``, the oldest going first.

Rejected: keeping them in the collaboration store beside the notebook's updates. That
store belongs to jupyter-collaboration (its rows are the notebook's history, and deleting
it is a documented remedy), and a mark must outlive a notebook's history being cut.

Guarded by ``tests/document/test_offline_tab_after_checkout.py``
(``test_lines_typed_offline_across_a_server_restart_are_a_proposal``) and the example below.

Example:
    >>> import tempfile
    >>> from jupyter_loop.document.file_guards.file_reloads import FileReload
    >>> kept = KeptReloads(Path(tempfile.mkdtemp()), keep=2, max_bytes=10)
    >>> for clock in (1, 2, 3):
    ...     kept.write("json:notebook:f1", FileReload(7, clock, b"abc"))
    >>> [r.clock for r in kept.read("json:notebook:f1")]
    [2, 3]
    >>> kept.write("json:notebook:f2", FileReload(8, 1, b"abcdefg"))  # 13 bytes: the oldest go
    >>> [r.clock for r in kept.read("json:notebook:f1")], len(kept.read("json:notebook:f2"))
    ([3], 1)
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from ...owner_only import open_private, private_dir
from ..reference import NotebookRef
from .file_reloads import FileReload

_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)$")
_FILE_ID = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$")


class KeptReloads:
    """Reload marks on disk, per notebook (by its file id)."""

    def __init__(self, root: Path, *, keep: int, max_bytes: int) -> None:
        self._root = root
        self._keep = keep
        self._max_bytes = max_bytes

    def write(self, room_id: str, reload: FileReload) -> None:
        """Keep ``reload`` of the room's notebook; drop what falls out of the bounds."""
        folder = self._folder(room_id)
        if folder is None:
            return
        private_dir(folder)
        name = f"{time.time_ns()}-{reload.client}-{reload.clock}"
        partial = folder / f".{name}"
        with open_private(partial, "wb") as out:
            out.write(reload.before)
        partial.replace(folder / name)  # whole or absent: a kill mid-write leaves no mark
        for stale in self._marks(folder)[: -self._keep]:
            stale.unlink(missing_ok=True)
        self._keep_within_bytes()

    def read(self, room_id: str) -> list[FileReload]:
        """The room's notebook's kept reloads, oldest first."""
        folder = self._folder(room_id)
        if folder is None or not folder.is_dir():
            return []
        reloads = []
        for path in self._marks(folder):
            found = _NAME.match(path.name)
            if found is None:
                continue
            try:
                before = path.read_bytes()
            except OSError:
                continue  # dropped meanwhile
            reloads.append(FileReload(int(found.group(2)), int(found.group(3)), before))
        return reloads

    def _folder(self, room_id: str) -> Path | None:
        file_id = NotebookRef.of_room(room_id).file_id
        return self._root / file_id if _FILE_ID.match(file_id) else None

    @staticmethod
    def _marks(folder: Path) -> list[Path]:
        return sorted((p for p in folder.iterdir() if _NAME.match(p.name)), key=_written_at)

    def _keep_within_bytes(self) -> None:
        folders = [folder for folder in self._root.iterdir() if folder.is_dir()]
        marks = sorted(
            (mark for folder in folders for mark in self._marks(folder)), key=_written_at
        )
        total = sum(m.stat().st_size for m in marks)
        for oldest in marks:
            if total <= self._max_bytes:
                break
            total -= oldest.stat().st_size
            oldest.unlink(missing_ok=True)


def _written_at(mark: Path) -> int:
    return int(mark.name.split("-", 1)[0])
