"""Each time a room sets its notebook from its file, marked with the notebook before it.

A room reloads its file at its load (the store's notebook found out of step with the
file), when its watcher sees the file changed, and when a save finds it changed (which
reloads first and says so after). A tab that did not see a reload holds a notebook the
file has replaced since; ``returning_tabs`` asks here which reloads a returning tab missed
(:meth:`FileReloads.missed_by`) and reads what it changed against the notebook before the
first of them.

The marks are taken as the room's events are emitted (a ``jupyter_events`` modifier runs
inside ``emit``, before the room goes on: a listener would run later, after the reload),
and, for the save's reload that is told only after, as the room reads its file (a step of
the contents manager's reads, ``reads``). They live in memory, per notebook, kept after
its room is freed (a tab may come back to the next one) within :data:`RELOAD_BYTES_KEPT`,
and on disk (``kept_reloads``), written in the background one after another: a tab may
come back to the next server.

Guarded by ``tests/document/test_offline_tab_after_checkout.py`` (a tab that missed a
reload, before and after its room was freed).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import collaboration
from ..reference import NotebookRef, canonical_path
from ..update_holes import state_vector
from .offline_edits import cells_of

if TYPE_CHECKING:  # a circle for types only, kept on purpose (tests/project/test_imports.py)
    from .kept_reloads import KeptReloads

RELOADS_KEPT = 4
"""Reloads remembered per notebook: a tab away for more is still caught by the oldest kept
(it missed that one too)."""

RELOAD_BYTES_KEPT = 64 * 1024 * 1024
"""What the notebooks before their reloads may hold in memory, all notebooks together; the
oldest go first. Kept after a room is freed: a tab may come back to the next one."""

READS_KEPT = 8
"""Open notebooks whose state at their last read is kept, for a reload that follows it."""


@dataclass(frozen=True)
class FileReload:
    """A room's notebook set from its file: by the room's own client, from its clock
    ``clock`` on, over the notebook ``before``."""

    client: int
    clock: int
    before: bytes

    def missed_by(self, known: dict[int, int], room: dict[int, int]) -> bool:
        """Whether a tab holding ``known`` (a state vector) has not seen this reload, in a
        room holding ``room``.

        A room built again without the reload (its store lost: the file loaded anew, a
        history of its own) does not hold it. A tab that joined that room did not miss
        the reload, there was none in what it joined; only a tab of the history before,
        which holds nothing of the room's, did (chaos seed 2034, trial 639).

        >>> mark = FileReload(client=7, clock=3, before=b"")
        >>> mark.missed_by({1: 5}, room={7: 9, 1: 5}), mark.missed_by({7: 9}, room={7: 9})
        (True, False)
        >>> mark.missed_by({2: 4}, room={2: 4}), mark.missed_by({1: 5}, room={2: 4})
        (False, True)
        """
        if room.get(self.client, 0) > self.clock:
            return known.get(self.client, 0) <= self.clock
        return not any(client in room for client in known)


class FileReloads:
    """The reloads of every notebook's room from its file, newest last."""

    def __init__(
        self, settings: dict[str, Any], log: logging.Logger, kept: KeptReloads | None = None
    ) -> None:
        self._settings = settings
        self._log = log
        self._reloads: dict[str, list[FileReload]] = {}
        self._read_before: dict[str, FileReload] = {}
        self._kept = kept
        self._looked_on_disk: set[str] = set()
        # One thread: the marks reach the disk in the order they were taken.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jupyter-loop-reloads")

    def start(self, contents_manager: Any) -> None:
        """Hear the rooms' events as they are emitted and the reads of their files."""
        events = self._settings.get("event_logger")
        if events is not None:
            events.add_modifier(schema_id=collaboration.EVENTS_SCHEMA, modifier=self._heard)
        wait = getattr(contents_manager, "wait_before_reads", None)
        if wait is not None:
            wait(self._before_read)

    async def stop(self) -> None:
        """Let the marks being written reach the disk, then end the writer's thread (left
        running, it kept the process of a stopped server from exiting)."""
        await asyncio.to_thread(self._writer.shutdown, wait=True)

    def any_of(self, room_id: str) -> bool:
        """Whether the notebook's room was ever reloaded from its file (that we know)."""
        return bool(self._marks_of(room_id))

    def missed_by(
        self, room_id: str, known: dict[int, int], room: dict[int, int]
    ) -> list[FileReload]:
        """The reloads a tab holding ``known`` (a state vector) did not see in a room
        holding ``room``, oldest first."""
        return [r for r in self._marks_of(room_id) if r.missed_by(known, room)]

    def _marks_of(self, room_id: str) -> list[FileReload]:
        if room_id not in self._looked_on_disk and self._kept is not None:
            self._looked_on_disk.add(room_id)  # once a server life: a tab may ask per message
            if room_id not in self._reloads:
                try:
                    kept = self._kept.read(room_id)
                except OSError as e:
                    self._log.warning("jupyter-loop could not read reloads of %s: %s", room_id, e)
                    kept = []
                if kept:
                    self._remember(room_id, kept)
        return self._reloads.get(room_id, [])

    # -- marking reloads -----------------------------------------------------------

    def _heard(self, schema_id: str, data: dict[str, Any]) -> dict[str, Any]:
        # A modifier that raises breaks the room's emit: nothing here may.
        try:
            room_id = str(data.get("room"))
            if collaboration.reload_about_to_begin(data):
                self._mark(room_id, self._now(room_id))
            elif collaboration.reload_just_ended(data):
                self._mark(room_id, self._read_before.pop(room_id, None))
        except Exception as e:
            self._log.warning("jupyter-loop could not mark a reload of %s: %s", data, e)
        return data

    async def _before_read(self, path: str, asked: Any) -> None:
        """A save that finds the file changed reloads it, and says so only after: the
        notebook before that reload is taken as the room reads the file."""
        if not asked.is_notebook_read(path):
            return
        try:
            file_id = self._settings["file_id_manager"].get_id(canonical_path(path))
            if file_id is None:
                return
            room_id = NotebookRef(canonical_path(path), str(file_id)).room_id
            now = self._now(room_id)
            if now is not None:
                self._read_before.pop(room_id, None)
                self._read_before[room_id] = now
                for stale in list(self._read_before)[:-READS_KEPT]:
                    del self._read_before[stale]
        except Exception as e:  # the read goes on
            self._log.warning("jupyter-loop could not look at the room of %s: %s", path, e)

    def _now(self, room_id: str) -> FileReload | None:
        """The mark a reload of the room starting now would get."""
        extension = collaboration.extension(self._settings)
        room = None if extension is None else collaboration.rooms(extension).get(room_id)
        if room is None:
            return None
        doc = room.ydoc
        clock = state_vector(doc.get_state()).get(doc.client_id, 0)
        return FileReload(doc.client_id, clock, doc.get_update())

    def _mark(self, room_id: str, reload: FileReload | None) -> None:
        if reload is None or not cells_of(reload.before):
            # A room's first load from its file replaces nothing (and writes its cells as
            # a client of no room, the same for every server: jupyter_server_ydoc's
            # deterministic load), so no tab can have edited what it set.
            return
        self._remember(room_id, [*self._marks_of(room_id), reload])
        if self._kept is not None:
            self._writer.submit(self._kept.write, room_id, reload).add_done_callback(self._written)

    def _written(self, done: Future[None]) -> None:
        if done.exception() is not None:  # the mark still serves this server
            self._log.warning("jupyter-loop could not keep a reload mark: %s", done.exception())

    def _remember(self, room_id: str, marks: list[FileReload]) -> None:
        self._reloads.pop(room_id, None)
        self._reloads[room_id] = marks[-RELOADS_KEPT:]  # the most recently reloaded last
        total = sum(len(r.before) for kept in self._reloads.values() for r in kept)
        while total > RELOAD_BYTES_KEPT and self._reloads:
            oldest = next(iter(self._reloads))
            total -= sum(len(r.before) for r in self._reloads.pop(oldest))
