"""A tab that comes back from offline after its notebook was reloaded from a replaced file.

The "laptop lid" with a ``git checkout`` meanwhile: a tab loses its connection and its
person types on; the notebook's file is replaced on disk; the room reloads it (the room
freed and built again, or its watcher). When the tab reconnects it sends what it typed,
and Yjs merges it as it merges any concurrent edit: the offline lines land beside the
checked-out code, glued to it or in the middle of it (chaos defect d).

What a person expects: the file came last, so the notebook shows the file; what they typed
offline is not lost but offered back. So, here:

1. A tab's sync messages wait until its room has loaded and is not setting its notebook
   from the file (``collaboration.loaded``): a reload under way comes first. (Tornado
   already holds a new connection's messages until its room has loaded: the handler's
   ``open`` is a coroutine that awaits the room's load; a watcher's reload comes later.)
2. Each reload is marked, with the notebook as it was before it (``file_reloads``): the
   room's client and its next clock, which a tab that saw the reload has passed.
3. A tab says what it holds when it connects (its sync step 1: a state vector). If it
   missed a reload and its first update brings edits of cells that changed since (by the
   reload, or anyone after it), those cells are set back as the room had them, right
   after the update is applied, and the tab's version of each is kept as a proposal on
   the cell (``keep``), which the person takes or leaves. Edits of cells nobody else
   touched merge as before; and where the reload rebuilt such a cell (same id and code,
   another printed output: jupyter_ydoc makes it a new shared map) the edits, merged into
   the map it replaced, are made again on the one the notebook shows.
4. The room answers such a tab's sync step 1 (sends it what it lacks) only once its first
   update is in, and so with the edits made again: a tab counts itself back when it has
   that answer, and whatever its person types next comes after them. Answered first, the
   tab typed its next line at the cell's end before the room's copy of its offline line
   reached it: two inserts at one place, which Y orders by client id (chaos seed 2042,
   trial 988: the two lines swapped). A tab answers the room's own step 1, sent as it
   joins, at once, so the wait is one round trip (and at most :data:`HOLD_SECONDS`).

The tab's update is applied, not dropped: a dropped update leaves the tab holding items the
room never gets, and every later edit of the tab hangs on them (Yjs keeps them pending).
Setting cells back is an edit like any other, so every tab, the store and the file agree.

Rejected: upstream's answer to a stale tab (jupyter_server_ydoc 3 sends it a "conflict"
message, whose dialog says its edits were not saved and offers Save As). It is sent only
when an update cannot be applied at all ("block parent"); an update that applies merges
silently, which is this case, and its edits would be lost unless the person saved a copy.

Left open: an update that arrives between a watcher's reload event and its read of the
file (milliseconds) is merged, as before.

Guarded by ``tests/document/test_offline_tab_after_checkout.py``.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import (
    YMessageType,
    YSyncMessageType,
    handle_sync_message,
    merge_updates,
    read_message,
)

from .. import collaboration
from ..cells import set_source
from ..reference import NotebookRef
from ..update_holes import UnreadableUpdate, state_vector, struct_ends
from ..writing import writing
from .file_reloads import FileReload, FileReloads
from .offline_edits import HeldCell, OfflineEdit, cells_of, held_cells, offline_edits

LOAD_WAIT_SECONDS = 60.0
"""How long a tab's sync messages wait for its room to load (a room that fails to load is
closed by its handler long before)."""

Keep = Callable[[YNotebook, Sequence[OfflineEdit]], object]
"""Keeps a returning tab's edits of cells that changed while it was away (as proposals)."""


def brings_news(update: bytes, held: dict[int, int]) -> bool:
    """Whether ``update`` holds structs a document with state vector ``held`` lacks.

    >>> from pycrdt import Doc, Text
    >>> doc = Doc()
    >>> doc.get("t", type=Text).insert(0, "a")
    >>> brings_news(doc.get_update(), {}), brings_news(doc.get_update(), {doc.client_id: 1})
    (True, False)
    """
    return any(end > held.get(client, 0) for client, end in struct_ends(update).items())


HOLD_SECONDS = 2.0
"""How long an update that came before its tab's state vector waits for it, and a sync
step 1 of a tab that missed a reload waits for the tab's first update."""


@dataclass(frozen=True)
class _Unanswered:
    """A tab's sync step 1 the room has not answered yet, and the tab's connection."""

    step1: bytes
    connection: Any


@dataclass
class _Arrival:
    """A tab's connection until its first update is decided: what it holds (its sync
    step 1), an update that came before that, and its step 1 while it waits for an
    answer."""

    known: dict[int, int] | None = None
    early: bytes | None = None
    decided: bool = False
    unanswered: _Unanswered | None = None
    _timer: asyncio.TimerHandle | None = field(default=None, repr=False)
    _answer_timer: asyncio.TimerHandle | None = field(default=None, repr=False)

    def hold(self, update: bytes, let_through: Callable[[], None]) -> None:
        self.early = update if self.early is None else merge_updates(self.early, update)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(HOLD_SECONDS, let_through)

    def decide(self) -> bytes | None:
        """Mark the tab's first update decided; the update held until now, if any."""
        self.decided = True
        if self._timer is not None:
            self._timer.cancel()
        early, self.early = self.early, None
        return early

    def answer_later(self, unanswered: _Unanswered, answer_anyway: Callable[[], None]) -> None:
        self.unanswered = unanswered
        self._answer_timer = asyncio.get_running_loop().call_later(HOLD_SECONDS, answer_anyway)

    def take_unanswered(self) -> _Unanswered | None:
        if self._answer_timer is not None:
            self._answer_timer.cancel()
        unanswered, self.unanswered = self.unanswered, None
        return unanswered


class ReturningTabs:
    """Serves each notebook room's tabs first: has their connections send at once, and
    takes back a returning tab's edits that would merge into cells changed while it was
    away (its file reloaded)."""

    def __init__(
        self, settings: dict[str, Any], reloads: FileReloads, keep: Keep, log: logging.Logger
    ) -> None:
        self._settings = settings
        self._reloads = reloads
        self._keep = keep
        self._log = log
        self._watching = False
        self._arrivals: weakref.WeakKeyDictionary[asyncio.Task[Any], _Arrival] = (
            weakref.WeakKeyDictionary()
        )
        self._late_answers: set[asyncio.Task[None]] = set()

    def watch_rooms(self) -> None:
        """Serve the tabs of every notebook room, from now on (once the collaboration
        extension has made its websocket server: at the server's start)."""
        extension = collaboration.extension(self._settings)
        if extension is not None and not self._watching:
            self._watching = True
            collaboration.hear_rooms(extension, self._room_made)

    # -- serving a tab -------------------------------------------------------------

    def _room_made(self, room_id: str, room: Any) -> None:
        if NotebookRef.is_notebook_room(room_id):
            room.on_message = lambda message: self._serve_or_pass(room_id, room, message)

    async def _serve_or_pass(self, room_id: str, room: Any, message: bytes) -> bool:
        """:meth:`_serve`, or, if it fails, the room serves the message as it would without
        us: the room drops a message whose hook raised, and a tab whose sync step 1 was
        dropped never gets what it lacks (every later update of the room waits in it for
        the missing part, and the tab shows none of it)."""
        try:
            return await self._serve(room_id, room, message)
        except Exception:
            self._log.exception("jupyter-loop could not serve a tab's message in %s", room_id)
            return False

    async def _serve(self, room_id: str, room: Any, message: bytes) -> bool:
        """Whether the room must skip ``message`` (it was taken care of here)."""
        collaboration.send_at_once(room)  # the tab that sent it is among the room's clients
        if len(message) < 2 or message[0] != YMessageType.SYNC:
            return False
        task = asyncio.current_task()  # the room serves each tab from its own task
        if task is None:
            return False
        arrival = self._arrivals.setdefault(task, _Arrival())
        if arrival.decided:  # its room had loaded then: each keystroke goes straight on
            return False
        try:
            await collaboration.loaded(room, LOAD_WAIT_SECONDS)
        except asyncio.TimeoutError:
            return False
        try:
            payload = read_message(message[2:])
            if message[1] == YSyncMessageType.SYNC_STEP1:
                arrival.known = state_vector(payload)
                if arrival.early is not None:  # it came first: decide on it now
                    early = arrival.decide()
                    if early is not None and not self._came_back(
                        room_id, room, early, arrival.known
                    ):
                        room.ydoc.apply_update(early)
                    return False
                return self._answers_later(room_id, room, message, arrival)
            if arrival.known is None:
                if not self._reloads.any_of(room_id):
                    arrival.decide()
                    return False
                # Its update overtook the state vector it sends first (pycrdt's provider
                # sends them from two tasks): hold it until that comes, a moment at most.
                arrival.hold(payload, lambda: self._let_through(room, arrival))
                return True
            arrival.decide()
            taken = self._came_back(room_id, room, payload, arrival.known)
            await self._answer(room, arrival)
            return taken
        except (UnreadableUpdate, ValueError, IndexError) as e:
            arrival.decide()
            await self._answer(room, arrival)
            self._log.warning("jupyter-loop could not read a tab's update in %s: %s", room_id, e)
            return False

    def _answers_later(self, room_id: str, room: Any, step1: bytes, arrival: _Arrival) -> bool:
        """Hold back the room's answer to the sync step 1 of a tab that holds a notebook
        and missed a reload, until the tab's first update is in; whether it is held. (A
        new tab holds nothing to bring back: answered at once.)"""
        known = arrival.known or {}
        if not known or not self._missed(room_id, room, known):
            return False
        connection = collaboration.served_connection(room)
        if connection is None:
            return False

        def answer_anyway() -> None:
            task = asyncio.create_task(self._answer(room, arrival))
            self._late_answers.add(task)
            task.add_done_callback(self._late_answers.discard)

        arrival.answer_later(_Unanswered(step1, connection), answer_anyway)
        return True

    async def _answer(self, room: Any, arrival: _Arrival) -> None:
        """Answer a tab's held sync step 1 with what the room holds now."""
        unanswered = arrival.take_unanswered()
        if unanswered is None:
            return
        reply = handle_sync_message(unanswered.step1[1:], room.ydoc)
        if reply is None:
            return
        try:
            await unanswered.connection.send(reply)
        except Exception as e:  # the tab left meanwhile: it will ask again when it is back
            self._log.debug("jupyter-loop could not answer a returning tab: %s", e)

    def _missed(self, room_id: str, room: Any, known: dict[int, int]) -> list[FileReload]:
        """The reloads of the room a tab holding ``known`` did not see, oldest first."""
        return self._reloads.missed_by(room_id, known, state_vector(room.ydoc.get_state()))

    def _let_through(self, room: Any, arrival: _Arrival) -> None:
        """A held update whose state vector never came merges, as any update does."""
        early = arrival.decide()
        if early is not None:
            room.ydoc.apply_update(early)

    def _came_back(self, room_id: str, room: Any, update: bytes, known: dict[int, int]) -> bool:
        """Take back a returning tab's first update if it missed a reload and edits what
        changed meanwhile; whether it did (and applied the update)."""
        missed = self._missed(room_id, room, known)
        if not missed or not brings_news(update, state_vector(room.ydoc.get_state())):
            return False
        return self._take_back(room_id, room, update, missed[0])

    def _take_back(self, room_id: str, room: Any, update: bytes, reload: FileReload) -> bool:
        notebook = collaboration.notebook_of(room)
        if notebook is None:
            return False
        edits = offline_edits(reload.before, update)
        before = {cell.cell_id: cell for cell in cells_of(reload.before)}
        held = held_cells(notebook)
        now = {cell.cell_id: cell for cell in held}
        taken = [_as_met(edit, now) for edit in edits if _changed_meanwhile(edit, before, now)]
        room.ydoc.apply_update(update)
        merged = {cell.cell_id: cell for cell in held_cells(notebook)}
        lost = [e for e in edits if e not in taken and _lost_in_a_rebuilt_cell(e, now, merged)]
        if lost:
            with writing(notebook):
                _merge_again(notebook, lost)
        if not taken:
            return True
        with writing(notebook):
            _set_back(notebook, held, {edit.cell_id for edit in taken})
        kept = [edit for edit in taken if _still_differs(edit, now)]
        self._log.warning(
            "jupyter-loop: a tab came back to %s with edits of %d cell(s) that changed "
            "while it was away (its file was reloaded); kept as proposals, not merged",
            room_id,
            len(kept),
        )
        if kept:
            with writing(notebook):
                self._keep(notebook, kept)
        return True


def _changed_meanwhile(
    edit: OfflineEdit, before: dict[str, HeldCell], now: dict[str, HeldCell]
) -> bool:
    """Whether the tab's edit meets a change made while it was away: its cell is not
    what the tab last saw (reloaded, or edited after), or its new cell's id is taken."""
    current = now.get(edit.cell_id)
    if edit.kind == "insert":
        return current is not None
    seen = before.get(edit.cell_id)
    return current is not None and seen is not None and current.source != seen.source


def _lost_in_a_rebuilt_cell(
    edit: OfflineEdit, now: dict[str, HeldCell], merged: dict[str, HeldCell]
) -> bool:
    """Whether the tab's edit of a cell whose code nobody changed did not land: the reload
    rebuilt the cell (jupyter_ydoc makes a new shared map for a cell it cannot update in
    place, such as one whose printed output the file changes), and the edit merged into the
    map it replaced, which no notebook shows."""
    if edit.kind != "modify" or edit.source is None:
        return False
    current, after = now.get(edit.cell_id), merged.get(edit.cell_id)
    if current is None or after is None:
        return False
    return after.source == current.source != edit.source


def _merge_again(notebook: YNotebook, lost: list[OfflineEdit]) -> None:
    """Give the rebuilt cells the tab's sources: their code is what the tab edited, so its
    version is the merge."""
    sources = {edit.cell_id: edit.source for edit in lost}
    for ycell in notebook.ycells:
        source = sources.pop(str(ycell.get("id")), None)
        if source is not None:
            set_source(ycell, source)


def _as_met(edit: OfflineEdit, now: dict[str, HeldCell]) -> OfflineEdit:
    """A cell the tab added under an id the notebook has meanwhile (the room was built
    again from the file without the tab's history) is the tab's version of that cell."""
    if edit.kind == "insert" and edit.cell_id in now:
        return replace(edit, kind="modify", after=None)
    return edit


def _still_differs(edit: OfflineEdit, now: dict[str, HeldCell]) -> bool:
    current = now.get(edit.cell_id)
    return current is not None and (edit.kind == "delete" or current.source != edit.source)


def _set_back(notebook: YNotebook, held: tuple[HeldCell, ...], cell_ids: set[str]) -> None:
    """Make the cells ``cell_ids`` what ``held`` had: one copy each, in place, with its
    source (a tab's update may have deleted one, added a second, or edited it)."""
    seen: set[str] = set()
    extra = []
    for index, ycell in enumerate(notebook.ycells):
        cell_id = ycell.get("id")
        if cell_id in cell_ids and cell_id in seen:
            extra.append(index)
        seen.add(str(cell_id))
    for index in reversed(extra):
        del notebook.ycells[index]
    for cell in held:
        if cell.cell_id not in cell_ids:
            continue
        if cell.cell_id not in seen:
            at = min(cell.index, len(notebook.ycells))
            notebook.ycells.insert(at, notebook.create_ycell(cell.content))
            continue
        for ycell in notebook.ycells:
            if ycell.get("id") == cell.cell_id and str(ycell.get("source", "")) != cell.source:
                set_source(ycell, cell.source)
