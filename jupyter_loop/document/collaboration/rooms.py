"""The rooms: made, loaded, locked, saved, reloaded from their file, and deleted; their
store, awareness and file loader. jupyter_server_ydoc's extension and ``DocumentRoom``,
reached by name."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Doc
from pycrdt.store import YDocNotFound

EXTENSION = "jupyter_server_ydoc"
"""The name jupyter_server_ydoc's extension app has in the server's settings."""


class _HeardRooms(dict[str, Any]):
    """The websocket server's rooms, telling of each room as it is put in."""

    def __init__(self, rooms: dict[str, Any], heard: Callable[[str, Any], None]) -> None:
        super().__init__(rooms)
        self.heard = [heard]

    def __setitem__(self, room_id: str, room: Any) -> None:
        super().__setitem__(room_id, room)
        for heard in self.heard:
            heard(room_id, room)


def hear_rooms(extension: Any, heard: Callable[[str, Any], None]) -> None:
    """Call ``heard(room_id, room)`` for each room in memory, and for each room made from
    now on before it serves any tab (the handler puts a room in before it starts serving:
    ``YDocWebSocketHandler.prepare``). jupyter_server_ydoc has no event for it."""
    server = extension.ywebsocket_server
    rooms = server.rooms
    if isinstance(rooms, _HeardRooms):
        rooms.heard.append(heard)
    else:
        server.rooms = _HeardRooms(rooms, heard)
    for room_id, room in list(rooms.items()):
        heard(room_id, room)


async def loaded(room: Any, timeout: float) -> None:
    """Return once the room has loaded its notebook and is not setting it from its file
    (at most ``timeout`` seconds: a room that failed to load is closed by its handler)."""

    async def settle() -> None:
        await room.ready_event.wait()
        async with update_lock(room):
            pass

    await asyncio.wait_for(settle(), timeout)


_LONG_AGO = datetime(1970, 1, 1, tzinfo=timezone.utc)


def extension(settings: dict[str, Any]) -> Any | None:
    """jupyter_server_ydoc's extension app, ``None`` if it is not enabled."""
    return settings.get(EXTENSION)


def rooms(extension: Any) -> dict[str, Any]:
    """The rooms in memory, by room id."""
    found: dict[str, Any] = extension.ywebsocket_server.rooms
    return found


def room_lock(extension: Any, room_id: str) -> asyncio.Lock:
    """The lock under which jupyter_server_ydoc creates and deletes the room."""
    lock: asyncio.Lock = extension._room_locks[room_id]
    return lock


async def delete_room(extension: Any, room: Any, file_id: str) -> None:
    """Delete the room (under :func:`room_lock`), and its file loader if no room uses it,
    as jupyter_server_ydoc does when a room's last client leaves."""
    await extension.ywebsocket_server.delete_room(room=room)
    loaders = extension.file_loaders
    if file_id in loaders and loaders[file_id].number_of_subscriptions == 0:
        await loaders.remove(file_id)


async def stored_document(extension: Any, file_id: str) -> Doc[Any] | None:
    """The notebook the store holds for ``file_id``, read as a room reads it when it loads
    (``None``: nothing stored). The store's path is the one jupyter_server_ydoc gives a
    notebook's room."""
    store = extension.ystore_class(path=f".notebook:{file_id}.y", log=extension.log)
    database = getattr(store, "db_path", None)  # an SQLite store (the default, and ours)
    # Off the event loop: SQLite waits (up to seconds) while a room's store writes.
    if database is not None and not await asyncio.to_thread(_holds, Path(database), store.path):
        return None  # starting the store would create its database, racing a room's start
    document: Doc[Any] = Doc()
    async with store:
        try:
            await store.apply_updates(document)
        except YDocNotFound:
            return None
    return document


def _holds(database: Path, path: str) -> bool:
    """Whether the store's SQLite file holds updates of ``path`` (read-only: a missing
    file or table is "no")."""
    try:
        with closing(sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)) as db:
            query = "SELECT 1 FROM yupdates WHERE path = ? LIMIT 1"
            return db.execute(query, (path,)).fetchone() is not None
    except (sqlite3.Error, OSError, ValueError):
        return False


def notebook_of(room: Any) -> YNotebook | None:
    """The room's notebook, once the room holds one that is loaded."""
    document = getattr(room, "_document", None)
    if isinstance(document, YNotebook) and getattr(room, "ready", False):
        return document
    return None


async def observed(room: Any) -> None:
    """Return once the room sends its document's updates to its store and clients.

    A room is ready as soon as it is loaded, but subscribes to its document a turn of the
    event loop later. A write made in between is neither stored nor sent: a tab then holds
    every later update of that client pending in Yjs (it waits for structs it never got)
    and never shows a count or an output of ours again, even after a restart.
    jupyter_server_ydoc 3 says when (``ydoc_observed``); pycrdt-websocket 0.16.2 (the
    JupyterLab 4.5 line) has no event for it: its subscription appears within a few turns.
    """
    event = getattr(room, "ydoc_observed", None)
    if event is not None:
        await event.wait()
        return
    for _ in range(100):
        if getattr(room, "_subscription", None) is not None:
            return
        await asyncio.sleep(0.01)


def save_now(room: Any) -> asyncio.Task[None] | None:
    """Start the room's save at once, as a tab's Save does (``None``: the room is busy
    being updated from its file and saves after that)."""
    task: asyncio.Task[None] | None = room._save_to_disc()
    return task


async def not_reloading(room: Any) -> None:
    """Return once the room is not setting its notebook from its file, without yielding to
    the loop when it is not: a caller that writes right after, with no await between, then
    writes outside any reload.

    jupyter_ydoc sets a reloaded notebook (``aset``, and the progressive first load) in one
    transaction held open across its awaits, a turn of the loop per cell; pycrdt refuses a
    write of ours meanwhile (a nested transaction of another origin), and a write of no
    origin would join the reload's. The room holds its update lock for the whole of it.
    (``docs/upstream/reload-transaction.md``)
    """
    lock = update_lock(room)
    if lock.locked():
        async with lock:
            pass


def update_lock(room: Any) -> asyncio.Lock:
    """The lock the room holds while it sets its document from the file; a change made
    under it does not start the room's autosave."""
    lock: asyncio.Lock = room._update_lock
    return lock


def awareness_states(room: Any) -> dict[int, dict[str, Any]]:
    """What each client connected to the room says of itself (its awareness state: the
    user it acts for, its cursors, its fields), by Yjs client id; the room's own entry
    left out."""
    awareness = getattr(room, "awareness", None)
    if awareness is None:
        return {}
    own = awareness.client_id
    return {c: dict(state) for c, state in awareness.states.items() if c != own and state}


def announce(room: Any, update: bytes) -> None:
    """Apply an awareness update of the server's making to the room and send it to every
    tab: pycrdt-websocket's room sends on the changes its awareness hears with the origin
    ``"local"`` (its own), and keeps the others to itself."""
    awareness = getattr(room, "awareness", None)
    if awareness is not None:
        awareness.apply_awareness_update(update, "local")


def loader_of(room: Any) -> Any:
    """The room's ``FileLoader``: ``last_modified`` is the file's time as the room last
    read or wrote it; its lock is held for the whole of a room's save."""
    return room._file


def loader_lock(loader: Any) -> asyncio.Lock:
    lock: asyncio.Lock = loader._lock
    return lock


async def look_at_file(room: Any) -> None:
    """Let the room's loader look at the file now, from the caller's task: a file changed
    on disk is reloaded into the room as its watcher would
    (``docs/upstream/cancelled-reload.md``)."""
    await loader_of(room).maybe_notify()


async def reload_file(room: Any) -> None:
    """Reload the room from its file even though its loader believes it has read it (the
    loader took the file's time for a reload that was then cancelled, or for its own save
    that another program's write followed at once)."""
    loader = loader_of(room)
    async with loader_lock(loader):  # a save under way sets the loader's time as it ends
        loader.last_modified = _LONG_AGO
    await loader.maybe_notify()
