"""Saving live notebooks to their files: now, soon, and when due while a cell prints.

jupyter-collaboration saves a room on a debounce: a document that changes more often than
its save delay (a cell printing several times a second) is never saved until the run
ends. jupyter-loop saves the rooms it writes into itself:

* :meth:`RoomSaves.save_if_due` at each batch of outputs, every ``save_interval`` seconds
  (counted from the last save, and from the start of the run that writes);
* :meth:`RoomSaves.save_soon` at a run's end, once runs have stopped ending for a second
  (:data:`QUIET`), and at most :data:`LATEST` seconds after the first end not yet saved;
* :meth:`RoomSaves.save` now (a restart's recovery, a version taken).

A save first lets hooks run (the output journal commits, so it is never behind the
file) and lets the room reload a file changed on disk; listeners hear of each save's
start time once it is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from . import collaboration

QUIET = 1.0
"""Seconds without a run ending before the runs that ended are saved: a user stepping
through cells with Shift-Enter gets the save when they stop to read, as jupyter-collaboration
saves a tab's edits a second after the last one. Rejected: a save half a second after each
end (what this did before). Stepping through cells, a save then came with nearly every
run, and with it the tabs fetching the file's model, on the event loop and the page the
next run needed (a profile of 80 runs of ``bench/browser_latency.js``'s cells: 40 saves,
stock JupyterLab none). The output journal, not the file, is what a crash needs
(``execution/durability/wal.py``)."""

LATEST = 5.0
"""Most seconds a run's end waits for its save while runs keep ending."""

SPREAD = 0.25
"""Seconds of the server's time each room being written into gets between its own saves
(while cells print): with ``n`` such rooms a room saves every ``max(save_interval,
n * SPREAD)`` seconds, so the server as a whole makes at most about four saves a second
however many notebooks print. Each save costs the event loop the notebook's
serialization, its signature and its reading back (about 35 ms of loop per save with 40
notebooks printing, ``bench/capacity.py`` under py-spy); a save every 5 s for each of 40
rooms took a quarter of the loop there, which then stalled for seconds."""


@dataclass
class _PendingSave:
    """A run-end save waiting for runs to stop ending (see :meth:`RoomSaves.save_soon`)."""

    first_asked: float
    due: float
    now: asyncio.Event = field(default_factory=asyncio.Event)  # set: save without waiting

    def asked_again(self, at: float, quiet: float, latest: float) -> None:
        self.due = min(at + quiet, self.first_asked + latest)

    async def wait(self) -> None:
        while (left := self.due - time.monotonic()) > 0 and not self.now.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.now.wait(), left)


class RoomSaves:
    """The saves jupyter-loop makes of the rooms it writes into.

    Args:
        room: The room of a room id, ``None`` when it is not in memory.
        pin: Keep a room in memory (until as many ``unpin`` calls).
        unpin: Let a pinned room go.
        log: Where failed saves are told.
        save_interval: Seconds between two saves of a room being written into
            (``None`` or 0: only at a run's end).
    """

    def __init__(
        self,
        room: Callable[[str], Any | None],
        pin: Callable[[str], None],
        unpin: Callable[[str], None],
        log: logging.Logger,
        save_interval: float | None = 5.0,
    ) -> None:
        self._room = room
        self._pin = pin
        self._unpin = unpin
        self._log = log
        self._save_interval = save_interval
        self._last_save: dict[str, float] = {}  # when the room's last save ended
        self._saving: set[str] = set()  # rooms with a save under way
        self._writing: dict[str, float] = {}  # rooms written into, and when last
        self._pending: dict[str, _PendingSave] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._listeners: list[Callable[[str, float], None]] = []
        self._before: list[Callable[[], Awaitable[None]]] = []

    async def save(self, room_id: str) -> None:
        """Write the live document to its file now.

        A save that fails (the file was deleted or moved away mid-run, the disk is full) is
        logged and does not stop the run: the outputs stay in the live document.
        """
        room = self._room(room_id)
        if room is None:
            return
        for hook in self._before:
            try:
                await hook()
            except Exception as e:
                self._log.warning("jupyter-loop: a step before saving %s failed: %s", room_id, e)
        self._saving.add(room_id)
        try:
            await self._reload_if_changed_on_disk(room)
            started = time.monotonic()
            task = collaboration.save_now(room)
            if task is None:
                return
            try:
                await task
            except Exception as e:
                self._log.warning("jupyter-loop could not save room %s: %s", room_id, e)
                return
        finally:
            self._saving.discard(room_id)
            self._last_save[room_id] = time.monotonic()
        for listener in self._listeners:
            listener(room_id, started)

    async def _reload_if_changed_on_disk(self, room: Any) -> None:
        """Let the room reload a file changed on disk (a ``git checkout``) before we save.

        Else our save finds the change: jupyter-collaboration then reloads the file inside
        the save's task, which the next document change cancels (our outputs change it
        all the time), and a reload cancelled there is lost for good: the room has taken
        the file's time as its own, so the following save writes the old notebook over
        the checked-out file (``docs/upstream/cancelled-reload.md``). Asked here, in our
        own task, the file's watcher reloads it, and nothing cancels that.
        """
        try:
            await collaboration.look_at_file(room)
        except Exception as e:  # the file is gone or unreadable: the save will say so
            self._log.debug("jupyter-loop could not check the file of %s: %s", room, e)

    def before_saving(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Await ``hook()`` before each save made here (the output journal commits, so it
        is never behind the file)."""
        self._before.append(hook)

    def on_saved(self, listener: Callable[[str, float], None]) -> None:
        """Call ``listener(room_id, started)`` after each save made here; the file then
        holds at least what the document held at monotonic time ``started``."""
        self._listeners.append(listener)

    def save_soon(self, room_id: str, quiet: float = QUIET, latest: float = LATEST) -> None:
        """Save once no run has asked for ``quiet`` seconds, or ``latest`` seconds after the
        first ask not yet saved; runs that ask meanwhile share that save.

        A run's end asks: a Run All of short cells saves every few seconds, not once per
        cell, and no cell waits for the disk. The room is pinned until then: a run with no
        tab open must not lose its end to the room's clean-up.
        """
        at = time.monotonic()
        pending = self._pending.get(room_id)
        if pending is not None:
            pending.asked_again(at, quiet, latest)
            return
        pending = self._pending[room_id] = _PendingSave(at, at + quiet)
        self._pin(room_id)

        async def save_later() -> None:
            try:
                try:
                    await pending.wait()
                finally:
                    del self._pending[room_id]  # asks from now on: a save of their own
                await self.save(room_id)
            finally:
                self._unpin(room_id)

        task = asyncio.ensure_future(save_later())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def save_if_due(self, room_id: str, since: float | None = None) -> None:
        """Save unless the room's last save ended less than its interval ago (or the run
        writing began, at monotonic time ``since``), or a save of it is under way.

        Counted from the last save alone, a run's first output after a pause saved the
        notebook at once: a trivial cell paid a whole save between its output and its
        end, and the run's end saved again (``tests/document/test_saves_within_a_run.py``); a
        run's end is saved anyway (:meth:`save_soon`), and a long one every interval.

        The interval is ``save_interval``, longer when many rooms are written into at
        once (:data:`SPREAD`); it counts from the end of the last save, and a save never
        starts beside another of the same room: on a loaded server a save takes long, and
        saves that started every interval regardless queued behind each other, each
        costing the loop a whole notebook, so the loop fell further behind and the saves
        came faster still (``tests/document/test_save_bounds.py``).
        """
        if not self._save_interval:
            return
        now = time.monotonic()
        self._writing[room_id] = now
        interval = self._interval(now)
        last = self._last_save.get(room_id)
        if last is None:
            # The first save comes somewhere within the interval, not at its end: the
            # cells of a class started together would save all at once, every interval
            # (seen as bursts of 10 saves within a second with 10 notebooks printing).
            self._last_save[room_id] = now - random.uniform(0, interval / 2)
            return
        if since is not None:
            last = max(last, since)
        if room_id not in self._saving and now - last >= interval:
            await self.save(room_id)

    def _interval(self, now: float) -> float:
        """Seconds between two saves of a room being written into, given how many are."""
        assert self._save_interval
        recent = max(self._save_interval, len(self._writing) * SPREAD) * 2
        for room_id in [r for r, at in self._writing.items() if now - at > recent]:
            del self._writing[room_id]  # no longer written into
        return max(self._save_interval, len(self._writing) * SPREAD)

    async def stop(self, timeout: float = 3.0) -> None:
        """Make the saves runs asked for now, without waiting for the runs to pause, and
        finish those under way; what has not finished within ``timeout`` seconds is
        cancelled."""
        for pending in self._pending.values():
            pending.now.set()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
