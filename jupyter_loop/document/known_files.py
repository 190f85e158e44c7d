"""The notebook files as the server last knew them, written down for its next process.

After a crash, the restart puts back the outputs of the runs it cut off
(``execution.durability.recovery`` replays their output journals). That is right when the file is
the one the dead process left: its own last save, or the file its room read and never
saved. It is wrong when someone replaced the file in between (a ``git checkout`` while no
server ran, or just as the new one started): that file came last and wins, as it does
when it changes under a running server (the room reloads it, outputs included).
Replaying over it put an old run's lines into the checked-out cell (chaos seed 2034,
trial 44).

So, for each notebook, the server writes down the :data:`~jupyter_loop.saves.FileStamp`
(mtime, size, inode) of the file it last knew:

* a save about to be renamed into place: the file it will leave, *before* the rename,
  with the file it replaces if that one was known, so a kill on either side of the rename
  finds a stamp it knows;
* a save done: the file as the save left it (a save written in place has no rename);
* a room's read of the file (its load, a reload after an out-of-band change).

The next process asks of the file its room read (:meth:`KnownFiles.replaced_while_down`):
is it one the last process wrote down, or one this process saved itself (a room's load
may first save the stored notebook over a file that lags it, ``lagging_files``)? If
neither, someone else wrote it. The recovery asks once the room is loaded, so a checkout
that lands between the restart and that load counts too.

Stance: a file with no record (the first start with this version, a contents manager that
does not write local files) counts as known, which is what the restart assumed before.

Rejected: comparing the file's hash with the hash in the stored document, as
``lagging_files`` does. The room writes that hash a moment after its save; a kill in that
moment would make the server's own last save look like a checkout, and the journal's
lines since that save would be lost. Records are small files renamed into place and not
``fsync``-ed: a killed process loses none of them (the kernel holds them); after a power
cut one may be a save behind, and that file then wins as a checkout would.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from ..owner_only import open_private, private_dir
from ..saves import FileStamp, ReplacingSavesMixin, file_stamp, written_stamp
from . import collaboration


class KnownFiles:
    """Writes down each notebook file as the server last knew it (see the module)."""

    def __init__(self, directory: Path | None, log: logging.Logger) -> None:
        self._directory = directory  # None: nothing written down, every file known
        self._log = log
        self._contents: Any = None
        self._previous: dict[str, list[FileStamp] | None] = {}  # the last process's record
        self._saved: dict[str, set[FileStamp]] = {}  # what this process's saves left
        self._read: dict[str, FileStamp] = {}  # each file as its room last read it

    def start(self, contents_manager: Any, events: Any) -> None:
        """Hook the saves and the rooms' reads (after the steps that may refuse a save)."""
        if self._directory is None:
            return
        try:
            private_dir(self._directory)
        except OSError as e:
            self._log.warning("jupyter-loop cannot note its notebook files: %s", e)
            self._directory = None
            return
        self._contents = contents_manager
        if isinstance(contents_manager, ReplacingSavesMixin):
            contents_manager.check_before_replacing(self._before_replacing)
        contents_manager.register_post_save_hook(self._after_save)
        if events is not None:
            events.add_listener(schema_id=collaboration.EVENTS_SCHEMA, listener=self._heard)

    def replaced_while_down(self, path: str) -> bool:
        """Whether the notebook at ``path`` (API path), as its room read it (or as it is,
        before any read), is neither a file the last process knew nor one this process
        saved: someone else wrote it in between."""
        os_path = self._os_path(path)
        if os_path is None:
            return False
        known = self._previous_record(os_path)
        read = self._read.get(os_path) or file_stamp(os_path)
        saved = self._saved.get(os_path, set())
        replaced = known is not None and read is not None and read not in {*known, *saved}
        # Asked once per interrupted run at a restart: what it was decided on goes in the
        # log, so a restart that wrote over a file (or left one alone) can be explained.
        self._log.info(
            "jupyter-loop: %s %s; read as %s, the last process knew %s, saved here %s",
            path,
            "was replaced while the server was down" if replaced else "is a file it knew",
            read,
            known,
            sorted(saved),
        )
        return replaced

    # -- what this process reads and writes --------------------------------------

    def _before_replacing(self, os_path: str, found: FileStamp | None, new: FileStamp) -> None:
        if os_path.endswith(".ipynb"):
            self._saved.setdefault(os_path, set()).add(new)
            known = self._record_of(os_path) or []
            self._write(os_path, [new, *([found] if found in known else [])])

    def _after_save(self, model: Any, os_path: str, contents_manager: Any, **_: Any) -> None:
        if not os_path.endswith(".ipynb"):
            return
        # The file our rename left, even if another program wrote over it just after
        # (that file is not ours: ``missed_reloads`` has the room reload it).
        left = written_stamp(contents_manager, os_path) or file_stamp(os_path)
        if left is not None:
            self._saved.setdefault(os_path, set()).add(left)
            self._write(os_path, [left])

    async def _heard(self, logger: Any, schema_id: str, data: Any) -> None:
        # A listener that raises breaks the room that emitted the event: nothing here may.
        if not collaboration.built_from_file(data) or not str(data.get("path")).endswith(".ipynb"):
            return
        os_path = self._os_path(str(data["path"]))
        read = file_stamp(os_path) if os_path is not None else None
        if os_path is not None and read is not None:
            self._read[os_path] = read
            self._write(os_path, [read])

    # -- the records -------------------------------------------------------------

    def _os_path(self, path: str) -> str | None:
        try:
            return str(self._contents._get_os_path(path.strip("/")))
        except Exception:  # not a file manager, or a path outside its root
            return None

    def _previous_record(self, os_path: str) -> list[FileStamp] | None:
        if os_path not in self._previous:
            self._previous[os_path] = self._record_of(os_path)
        return self._previous[os_path]

    def _record(self, os_path: str) -> Path:
        assert self._directory is not None
        name = hashlib.sha256(os_path.encode("utf-8")).hexdigest()[:32]
        return self._directory / f"{name}.json"

    def _record_of(self, os_path: str) -> list[FileStamp] | None:
        if self._directory is None:
            return None
        try:
            record = json.loads(self._record(os_path).read_text(encoding="utf-8"))
            if record.get("path") != os_path:
                return None
            return [(int(m), int(s), int(i)) for m, s, i in record["stamps"]]
        except (OSError, ValueError, KeyError, TypeError):  # none yet, or unreadable
            return None

    def _write(self, os_path: str, stamps: list[FileStamp]) -> None:
        self._previous_record(os_path)  # the last process's, kept before it is written over
        record = self._record(os_path)
        temporary = record.with_suffix(".writing")
        try:
            with open_private(temporary, "w", encoding="utf-8") as file:
                json.dump({"path": os_path, "stamps": stamps}, file)
            os.replace(temporary, record)
        except OSError as e:  # the save or read goes on; a restart then trusts the file
            self._log.warning("jupyter-loop could not note the state of %s: %s", os_path, e)
