"""Keep a tab's idea of the notebook file in step with the server's own saves.

When a user saves (Ctrl-S), JupyterLab first asks for the file's hash and compares it with
the hash it knows from its last open or save; if they differ it stops on "File Changed …
Overwrite / Revert?". Under real-time collaboration a tab learns the hash of a save the
server made from the room's document state (``hash``), which jupyter-collaboration sets
when a save completes (``DocumentRoom._maybe_save_document``).

The gap: every change to the document cancels the room's save task in flight
(``_on_document_change`` starts a new debounced save and cancels the previous one). The
file write itself is shielded and completes, but the cancelled task never records the new
hash. jupyter-loop writes outputs into the document many times a second while a cell runs,
so a save (its own, forced every ``save_interval`` and after each run, or the room's
autosave) is cancelled this way most of the time, and the file on disk then carries a hash
no tab has heard of until some later save completes: up to ``save_interval`` during a run,
and for good when a tab edit cancels the last save after a run (the next autosave waits
for a quiet document). A Ctrl-S in that window asks Overwrite / Revert.

Here each save of a notebook the contents manager makes (a post-save hook, jupyter_server's
public API) is followed by a check, once that save's room step is over (the room's file
lock): if the file on disk is the room's own last write (same ``last_modified`` as its
loader recorded) and the room's ``hash`` is not the file's, the room's ``hash`` is set to
it, under the room's update lock as jupyter-collaboration does, so the change does not
itself start a save. A file changed by anyone else (``last_modified`` differs) is left to
jupyter-collaboration's out-of-band watcher.

A room that has loaded its file has no hash recorded until its first save completes, so
a stored notebook whose room was freed (or its server killed) before that save says
nothing about which file it knew, and upstream's "out-of-sync" reload then sets the file
over the lines typed since (``lagging_files``). So the same check follows a room's
initialization and its reloads from the file (its events), with one more condition: the
room's notebook must hold what the file holds, which a room still loading progressively
does not yet.

That leaves the moment between a save's write and that record: a Ctrl-S then reads the new
file's hash while the tab still knows the old one. So a check of the file's hash (a read
with ``hash`` and no content, what JupyterLab's Save asks first) waits, at most
``SETTLE_SECONDS``, for the saves of that notebook under way and their records
(:meth:`SavedHashes.settled`, a step of the contents manager's reads: ``reads``), and for
the room to have sent the record to its tabs.

Rejected: holding the room's update lock while jupyter-loop writes outputs, so its writes
never cancel a save. That also stops them from starting the room's autosave, which
``save_interval = None`` relies on, and makes every output batch wait on that lock.

Guarded by ``tests/document/test_save_state.py`` (and, for a room freed before its first
save, ``tests/document/test_file_behind_store.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Coroutine
from typing import Any

from jupyter_server.utils import ensure_async, to_api_path

from ...reads import ReadAsked, WaitingReads
from .. import collaboration
from ..one_pass import notebook_content
from ..reference import NotebookRef
from .lagging_files import comparable

SETTLE_SECONDS = 2.0
"""Longest a check of a notebook's hash waits for its saves under way (a save that failed
never says it ended: it is forgotten after this long)."""

SENT_SECONDS = 0.05
"""Time for the room to send a hash it just recorded to its tabs, before the check's reply
(the two go over different connections)."""


class SavedHashes:
    """Sets a room's recorded hash after any save of its notebook whose hash it missed."""

    def __init__(self, settings: dict[str, Any], log: logging.Logger) -> None:
        self._settings = settings
        self._log = log
        self._tasks: set[asyncio.Task[None]] = set()
        self._saving: dict[str, list[float]] = {}  # path: when its saves under way began
        self._catching_up: dict[str, set[asyncio.Task[None]]] = {}
        self._savers: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()  # tasks that saved

    def start(self, contents_manager: Any) -> None:
        contents_manager.register_pre_save_hook(self._before_save)
        contents_manager.register_post_save_hook(self._after_save)
        if isinstance(contents_manager, WaitingReads):
            contents_manager.wait_before_reads(self._before_read)
        events = self._settings.get("event_logger")
        if events is not None:
            events.add_listener(schema_id=collaboration.EVENTS_SCHEMA, listener=self._heard)

    async def _heard(self, logger: Any, schema_id: str, data: Any) -> None:
        # A listener that raises breaks the room that emitted the event: nothing here may.
        if collaboration.built_from_file(data) and str(data.get("path", "")).endswith(".ipynb"):
            self._spawn(self.catch_up(str(data["path"]).strip("/"), loaded=True))

    async def _before_read(self, path: str, asked: ReadAsked) -> None:
        if not asked.content and asked.require_hash:
            await self.settled(path)

    async def settled(self, path: str) -> None:
        """Return once no save of ``path`` is under way or unrecorded in its room."""
        task = asyncio.current_task()
        if task in self._tasks or task in self._savers:
            return  # a save reading its own hash (the room's loader) or our catch-up: the
            # very steps a check waits for
        path = path.strip("/")
        deadline = time.monotonic() + SETTLE_SECONDS
        waited = False
        while (now := time.monotonic()) < deadline:
            saving = [t for t in self._saving.get(path, ()) if now - t < SETTLE_SECONDS]
            tasks = self._catching_up.get(path)
            if not saving and not tasks:
                break
            waited = True
            if tasks:
                await asyncio.wait(list(tasks), timeout=deadline - now)
            else:
                await asyncio.sleep(0.01)
        if waited:
            await asyncio.sleep(SENT_SECONDS)

    def _before_save(self, model: Any, path: str, contents_manager: Any, **_: Any) -> None:
        if path.endswith(".ipynb"):
            self._saving.setdefault(path.strip("/"), []).append(time.monotonic())
            task = asyncio.current_task() if _in_event_loop() else None
            if task is not None:
                self._savers.add(task)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=3)

    def _after_save(self, model: Any, os_path: str, contents_manager: Any, **_: Any) -> None:
        if not os_path.endswith(".ipynb"):
            return
        path = to_api_path(os_path, contents_manager.root_dir).strip("/")
        saving = self._saving.get(path)
        if saving:
            saving.pop(0)
            if not saving:
                del self._saving[path]
        try:
            task = self._spawn(self.catch_up(path))
        except RuntimeError:  # a save made outside the server's event loop: no room to tell
            return
        catching_up = self._catching_up.setdefault(path, set())
        catching_up.add(task)
        task.add_done_callback(lambda done: self._caught_up(path, done))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        try:
            task = asyncio.get_running_loop().create_task(coroutine)
        except RuntimeError:
            coroutine.close()
            raise
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _caught_up(self, path: str, task: asyncio.Task[None]) -> None:
        tasks = self._catching_up.get(path)
        if tasks is not None:
            tasks.discard(task)
            if not tasks:
                del self._catching_up[path]

    async def catch_up(self, path: str, loaded: bool = False) -> None:
        """Record the file's hash in the notebook's room, if the room wrote (or, with
        ``loaded``, read) the file and its recorded hash is not the file's."""
        try:
            await self._catch_up(path, loaded)
        except Exception as e:  # a check that fails leaves the room as upstream left it
            self._log.debug("jupyter-loop could not check the saved hash of %s: %s", path, e)

    async def _catch_up(self, path: str, loaded: bool) -> None:
        extension = collaboration.extension(self._settings)
        file_id = self._settings["file_id_manager"].get_id(path)
        if extension is None or file_id is None:
            return
        room = collaboration.rooms(extension).get(NotebookRef(path, str(file_id)).room_id)
        document = collaboration.notebook_of(room)
        if room is None or document is None:
            return
        loader = collaboration.loader_of(room)
        contents = self._settings["contents_manager"]
        # The loader's lock is held for the whole of a room's save (write, then its hash):
        # once we have it, that save is over and its last_modified recorded.
        async with collaboration.loader_lock(loader):
            disk = await ensure_async(contents.get(path, content=loaded, require_hash=True))
            known_to_room = disk["last_modified"] == loader.last_modified
        if not known_to_room or document.hash == disk["hash"]:
            return
        # Under the lock the room holds while it sets its notebook from the file.
        async with collaboration.update_lock(room):
            if loader.last_modified != disk["last_modified"] or document.hash == disk["hash"]:
                return
            # One pass over the cells: ``document.get()`` reads them one by one, O(N²).
            if loaded and comparable(notebook_content(document)) != comparable(disk["content"]):
                return  # still loading, or changed since: this hash does not describe it
            document.hash = disk["hash"]
            self._log.debug("jupyter-loop recorded the hash of %s in its room", path)


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # a save made outside the server's event loop
        return False
    return True
