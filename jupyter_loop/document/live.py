"""Live shared notebooks: resolve them, keep their rooms alive while we write, save them.

jupyter_server_ydoc owns the rooms. We only borrow them:

* The document is resolved again for every batch of writes (never cached), so a room
  that was evicted and rebuilt is picked up instead of writing into a detached copy.
* While a run or an agent turn is in flight the room is *pinned*: a silent stand-in
  client sits in the room's client set, so closing the last tab does not schedule the
  room's deletion. When the last pin goes and no tab is connected, the room is cleaned
  up after the same delay jupyter_server_ydoc would have used.
* Saves are forced every ``save_interval`` seconds while writing, because autosave is
  a debounce that never fires while a cell prints more than once a second
  (``room_saves.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from jupyter_server.utils import ensure_async
from jupyter_ydoc import YNotebook
from tornado.web import HTTPError

from ..errors import BadRequest, JupyterLoopError, NotFound, Unavailable
from . import collaboration
from .known_files import KnownFiles
from .presence import AgentPresence, PersonFocus, people_of
from .reference import NotebookRef, canonical_path
from .room_saves import RoomSaves
from .update_holes import own_structs
from .writing import writing

STORES_FIRST_WRITES = "stores_first_writes"
"""A store class that stores a room's first writes itself (``ystore.CompactSQLiteYStore``)."""


class _StandInClient:
    """A room client that receives nothing: its presence keeps the room from being cleaned."""

    def __init__(self, room_id: str) -> None:
        self.path = room_id

    async def send(self, message: bytes) -> None:
        return None


class LiveDocuments:
    """Access to the server-side ``YNotebook`` of each open (or openable) notebook."""

    def __init__(
        self,
        settings: dict[str, Any],
        log: logging.Logger,
        save_interval: float | None = 5.0,
        known_files: KnownFiles | None = None,
    ) -> None:
        self._settings = settings
        self._log = log
        self._pins: Counter[str] = Counter()
        self._stand_ins: dict[str, _StandInClient] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.saves = RoomSaves(self._room, self.pin, self.unpin, log, save_interval)
        """Saves of the rooms we write into (now, soon, when due)."""
        self.known_files = known_files or KnownFiles(None, log)
        """Each notebook file as the server last knew it, kept for its next process."""
        self._whole: weakref.WeakSet[Any] = weakref.WeakSet()
        self._overwrites: Counter[str] = Counter()
        self._overwritten_at: dict[str, float] = {}
        self.agents = AgentPresence(self._room)
        """Agents at work, shown to the tabs of the notebook they work in."""
        events = settings.get("event_logger")
        if events is not None:
            events.add_listener(schema_id=collaboration.EVENTS_SCHEMA, listener=self._heard)

    # -- the file changed on disk --------------------------------------------------

    async def _heard(self, logger: Any, schema_id: str, data: Any) -> None:
        # jupyter_events calls listeners with these keywords; one that raises breaks the
        # room that emitted the event, so nothing here may.
        if isinstance(data, dict) and data.get("action") == "overwrite":
            room_id = str(data.get("room"))
            self._overwrites[room_id] += 1
            self._overwritten_at[room_id] = time.monotonic()

    def overwrites(self, room_id: str) -> int:
        """How many times the room's notebook was reloaded from its file since the server
        started: jupyter-collaboration replaces the notebook (sources *and* outputs) when
        the file changes on disk (a ``git checkout``).

        A count, not a callback: a cell's writer asks at each batch, so a reload heard while
        a batch is being written is not missed (the event comes before the reload ends)."""
        return self._overwrites[room_id]

    def overwritten_at(self, room_id: str) -> float | None:
        """When (``time.monotonic()``) jupyter-collaboration last said it reloads the
        room's notebook from its file; ``None``: never since the server started."""
        return self._overwritten_at.get(room_id)

    # -- resolving -----------------------------------------------------------------

    def _extension(self) -> Any:
        extension = collaboration.extension(self._settings)
        if extension is None:
            raise Unavailable(
                "Real-time collaboration (jupyter_server_ydoc) is not enabled on this server; "
                "jupyter-loop needs it to keep outputs on the server."
            )
        return extension

    async def resolve(self, path: str) -> NotebookRef:
        """The notebook at ``path`` (made canonical); raises if it is not a notebook."""
        path = canonical_path(path)
        file_ids = self._settings["file_id_manager"]
        known = file_ids.get_id(path)
        if known is not None and self._room(NotebookRef(path, known).room_id) is not None:
            return NotebookRef(path, known)  # a loaded room: the notebook exists
        contents = self._settings["contents_manager"]
        try:
            model = await ensure_async(contents.get(path, content=False))
        except HTTPError as e:
            raise NotFound(f"No notebook at '{path}'.") from e
        if model.get("type") != "notebook":
            raise BadRequest(f"'{path}' is not a notebook.")
        file_id = known or file_ids.index(path)
        if file_id is None:
            raise NotFound(f"No notebook at '{path}'.")
        return NotebookRef(path, str(file_id))

    async def room_id(self, path: str) -> str:
        """The room of the notebook at ``path`` (see :meth:`resolve`)."""
        return (await self.resolve(path)).room_id

    def path_of(self, room_id: str) -> str | None:
        """The notebook's current path (it follows renames)."""
        file_id = NotebookRef.of_room(room_id).file_id
        path = self._settings["file_id_manager"].get_path(file_id)
        return str(path) if path is not None else None

    def file_replaced(self, room_id: str) -> bool:
        """Whether the notebook's file, as its room read it, is neither one the last server
        process read or saved nor one this process saved: someone else wrote it in between
        (``known_files``)."""
        path = self.path_of(room_id)
        return path is not None and self.known_files.replaced_while_down(path)

    async def notebook(self, room_id: str) -> YNotebook:
        """The live shared notebook; loads its room if no tab has it open.

        It returns when the room is not reloading its file, with no await after that
        check: a caller that writes right away (no await between) writes outside a reload
        (``collaboration.not_reloading``)."""
        room = self._room(room_id)
        document = collaboration.notebook_of(room)
        if document is None:  # no tab has it open: its room loads now
            document = await self._load(room_id)
            room = self._room(room_id)
        await collaboration.observed(room)
        collaboration.send_at_commit(room)
        await self._store_first_writes(room)
        if self._pins[room_id]:
            self._hold(room_id)
        await collaboration.not_reloading(room)
        return document

    async def _load(self, room_id: str) -> YNotebook:
        try:
            document = await self._extension().get_document(
                room_id=room_id, copy=False, create=True
            )
        except JupyterLoopError:
            raise
        except Exception as e:  # the room failed to load: file gone, unreadable
            raise NotFound(f"The notebook could not be loaded: {e}") from e
        if not isinstance(document, YNotebook):
            raise NotFound("The notebook could not be loaded.")
        return document

    @asynccontextmanager
    async def edit(self, room_id: str) -> AsyncIterator[YNotebook]:
        """The live notebook of ``room_id`` (loaded if no tab has it open), written in one
        transaction of ours (``writing``: the one door for our writes)."""
        notebook = await self.notebook(room_id)
        with writing(notebook):
            yield notebook

    async def _store_first_writes(self, room: Any) -> None:
        """Store what the room's own client wrote before its store saw it, once a room.

        A room writes into its document before it observes it: the notebook's path when
        it is made and, on the JupyterLab 4.5 line, ``dirty`` once loaded. When the
        stored document matches the file, nothing stores those writes, and every later
        update of the room's client (all our outputs) hangs on them in Yjs after the next
        restart. jupyter-loop's own store stores them with the room's first observed
        update (``CompactSQLiteYStore.write``); a store of another class gets them here,
        before our first write. (``docs/upstream/room-first-write.md``)
        """
        ystore = getattr(room, "ystore", None)
        if ystore is None or getattr(ystore, STORES_FIRST_WRITES, False) or room in self._whole:
            return
        self._whole.add(room)
        try:
            await ystore.write(own_structs(room.ydoc))
        except Exception as e:  # a store closed under us: the file still holds the notebook
            self._log.warning("jupyter-loop could not write to the YStore: %s", e)

    def _room(self, room_id: str) -> Any | None:
        return collaboration.rooms(self._extension()).get(room_id)

    def loaded_room(self, path: str) -> tuple[str, Any] | None:
        """The room id and room of the notebook at ``path`` if its room is in memory; for
        callers that cannot wait (a contents manager's save hook)."""
        file_id = self._settings["file_id_manager"].get_id(canonical_path(path))
        if file_id is None:
            return None
        room_id = NotebookRef(canonical_path(path), str(file_id)).room_id
        room = self._room(room_id)
        return None if room is None else (room_id, room)

    def people(self, room_id: str) -> tuple[PersonFocus, ...]:
        """Who has the notebook open in a tab now, and the cells in their hand there
        (none when no room is loaded: then no tab is open)."""
        room = self._room(room_id)
        return () if room is None else people_of(collaboration.awareness_states(room))

    def is_loaded(self, room_id: str) -> bool:
        """Whether the notebook's room is in memory (a tab or a run has it open)."""
        return self._room(room_id) is not None

    def has_tabs(self, room_id: str) -> bool:
        """Whether a client (a tab, ``jupyter loop``) is connected to the notebook's room;
        a room kept loaded by a run, a turn (our stand-in) or the cleanup delay has none."""
        room = self._room(room_id)
        clients = getattr(room, "clients", None) or ()
        return any(not isinstance(client, _StandInClient) for client in clients)

    # -- pinning -------------------------------------------------------------------

    def pin(self, room_id: str) -> None:
        """Keep the room in memory until as many :meth:`unpin` calls."""
        self._pins[room_id] += 1
        if self._pins[room_id] == 1 and self._room(room_id) is not None:
            self._hold(room_id)

    def unpin(self, room_id: str) -> None:
        self._pins[room_id] -= 1
        if self._pins[room_id] <= 0:
            del self._pins[room_id]
            self._release(room_id)

    @asynccontextmanager
    async def pinned(self, room_id: str) -> AsyncIterator[None]:
        """Keep the room in memory for the duration of the block."""
        self.pin(room_id)
        try:
            yield
        finally:
            self.unpin(room_id)

    def _hold(self, room_id: str) -> None:
        room = self._room(room_id)
        if room is None:
            return
        stand_in = self._stand_ins.setdefault(room_id, _StandInClient(room_id))
        room.clients.add(stand_in)
        cleaner = getattr(room, "cleaner", None)
        if cleaner is not None and not cleaner.done():
            cleaner.cancel()

    def _release(self, room_id: str) -> None:
        stand_in = self._stand_ins.pop(room_id, None)
        room = self._room(room_id)
        if room is None or stand_in is None:
            return
        room.clients.discard(stand_in)
        if not room.clients:
            room.cleaner = self._spawn(self._clean_later(room_id, room))

    async def _clean_later(self, room_id: str, room: Any) -> None:
        extension = self._extension()
        delay = extension.document_cleanup_delay
        if delay is None:
            return
        await asyncio.sleep(delay)
        async with collaboration.room_lock(extension, room_id):
            current: Any = collaboration.rooms(extension).get(room_id)
            if current is not room or room.clients or self._pins[room_id]:
                return
            await collaboration.delete_room(extension, room, NotebookRef.of_room(room_id).file_id)
            self._log.info("jupyter-loop released room %s", room_id)

    async def stored(self, room_id: str, timeout: float = 10.0) -> bool:
        """Whether the room's store holds its notebook as it is now, once it does (False:
        not within ``timeout`` seconds, or the room is gone). A store of another class than
        jupyter-loop's cannot say: it is given a moment, as its writes take."""
        room = self._room(room_id)
        ystore = getattr(room, "ystore", None)
        if room is None:
            return False
        if ystore is None:
            return True  # no store: nothing outlives the server but the file
        holds = getattr(ystore, "holds", None)
        if holds is None:
            await asyncio.sleep(0.5)
            return True
        return bool(await holds(room.ydoc, timeout))

    # -- lifecycle -----------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def stop(self, timeout: float = 3.0) -> None:
        """Finish the saves under way and save what still waits (see
        :meth:`RoomSaves.stop`); then cancel the rooms' clean-ups still waiting."""
        await self.agents.stop()
        await self.saves.stop(timeout)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
