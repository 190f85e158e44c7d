"""Never save an open notebook over a file changed on disk that its room has not read.

jupyter-collaboration's autosave finds a file changed on disk (a ``git checkout``) by its
time, takes that time as its own and reloads the file inside the save's task. Any document
change while the file is read (a keystroke, an output) cancels that task, and the reload
with it; the file's watcher then sees no change any more (the time is already taken), so
the room's next save writes the old notebook over the checked-out file
(``docs/upstream/cancelled-reload.md``, found by the chaos suite).

Here a pre-save hook (jupyter_server's public API) refuses, with a 409, a save of a notebook
whose room is open while the file on disk is neither the server's own last write nor read
by the room since it changed. The same check runs again just before the save is renamed
into place (``saves``): serializing a notebook and the other hooks take a moment, and a
checkout landing in it was renamed over (chaos seed 2029 trial 3, under load). "Read" is
what jupyter-collaboration's room events say: ``load`` (the room was built from the file,
or from its store checked against the file) and ``overwrite`` (a reload); not
``initialize``, which it also says for each client that connects.
On the first refusal the room is made to reload the file from a task of ours, where nothing
cancels it: the loader is told its file is older than it is, and its own out-of-band check
(``maybe_notify``) then reloads the room as the file's watcher would. Saves stay refused
until that reload is done; the reload changes the document, so the room saves again.

A post-save hook does the same for a file another program wrote just after a save's
rename: jupyter_server reads the saved file's time back for the room's loader, which then
takes that program's time for its own write, and its watcher never sees the change.

"Read" is when the room starts reading the file, not when it says it will. Its watcher
says "overwrite" once it has taken the file's new time, lets the loader's lock go and only
then reads; a save waiting for that lock (an autosave, an output's save) came first, found
the time its own and wrote the room's older notebook over the checkout, which the watcher
then read back (chaos seed 2036 trial 157; ``tests/document/test_save_behind_a_reload.py``). So a
reload the watcher announced is under way until the task that announced it starts reading
the notebook (a step of the contents manager's reads, ``reads``), and a save meanwhile is
refused. A save that took the room's notebook before the reload and the lock after the read
still writes that older notebook, and the reload's own change starts no autosave (the room
sets its document under its update lock); so once the reload is in, the room is saved
again if its file does not hold its notebook (chaos seed 2038 trial 303: a kill before
the next edit, and the restart loaded the older file).

The stance: until the room has read it, the file on disk wins. A contents API ``PUT`` of an
open notebook in the moment before its room reloads a changed file is refused too (409:
save again); those saves are rare, and a refusal loses nothing, where a save let through
may lose a checkout.

Rejected: shielding the reload inside ``DocumentRoom._maybe_save_document`` (a copy of
upstream's private method to keep in step), and repairing after the fact (the save that
writes over the file is the very next autosave, a moment after the cancelled reload).

Guarded by ``tests/document/test_cancelled_reload.py``, ``test_save_behind_a_reload.py``,
``test_checkout_during_a_save.py`` and ``test_save_over_a_new_file.py`` (same folder), and
``tests/history/test_versions_racing_writes.py`` (the post-save hook).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import nbformat
from jupyter_server.utils import to_api_path
from tornado.web import HTTPError

from ...reads import ReadAsked
from ...saves import FileStamp, ReplacingSavesMixin, file_stamp, written_stamp
from ...tasks import BackgroundTasks
from .. import collaboration
from ..live import LiveDocuments
from ..one_pass import notebook_content
from .lagging_files import comparable

READ_ACTIONS = frozenset({"load", "overwrite"})
"""Room events after which the room has read its file (but a watcher's "overwrite": it says
so before it reads, see the module docstring)."""


class MissedReloads:
    """The pre-save hook and the reloads it starts (see the module docstring)."""

    def __init__(self, documents: LiveDocuments, settings: dict[str, Any], log: logging.Logger):
        self._documents = documents
        self._log = log
        self._read_at: dict[str, float] = {}  # room id -> when the room last read its file
        self._own: dict[str, FileStamp] = {}  # os path -> the file as the server's save left it
        self._reloading: dict[str, asyncio.Task[None]] = {}
        # room id -> the task that announced a reload it has not begun to read yet
        self._announced: dict[str, asyncio.Task[Any] | None] = {}
        self._following = BackgroundTasks(log)
        self._contents: Any = None
        self._sees_reads = False
        self._events = settings.get("event_logger")

    def start(self, contents_manager: Any) -> None:
        """Listen to the rooms' events and hook the saves; without room events nothing is
        refused (there would be no telling when a room read its file)."""
        self._contents = contents_manager
        if self._events is None:
            return
        # A modifier runs inside the room's ``emit``, in the task that goes on to read.
        self._events.add_modifier(schema_id=collaboration.EVENTS_SCHEMA, modifier=self._heard)
        wait_before_reads = getattr(contents_manager, "wait_before_reads", None)
        if wait_before_reads is not None:
            wait_before_reads(self._before_read)
            self._sees_reads = True
        contents_manager.register_pre_save_hook(self._before_save)
        contents_manager.register_post_save_hook(self._after_save)
        if isinstance(contents_manager, ReplacingSavesMixin):
            root = str(contents_manager.root_dir)  # type: ignore[attr-defined]  # a manager's
            contents_manager.check_before_replacing(
                lambda os_path, found, _new: self._check(to_api_path(os_path, root), os_path, found)
            )

    async def stop(self) -> None:
        await self._following.close(timeout=1)
        for task in list(self._reloading.values()):
            task.cancel()
        await asyncio.gather(*self._reloading.values(), return_exceptions=True)

    def _heard(self, schema_id: str, data: Any) -> Any:
        # A modifier that raises breaks the room that emitted the event: nothing here may.
        if not isinstance(data, dict):
            return data
        room_id = str(data.get("room"))
        try:
            if collaboration.reload_failed(data):
                self._announced.pop(room_id, None)  # before its read, maybe: the stamp decides
            elif data.get("action") == "overwrite" and collaboration.reload_about_to_begin(data):
                if self._sees_reads:
                    self._announced[room_id] = asyncio.current_task()
                else:  # no telling when it reads: the announcement stands for the read
                    self._read_at[room_id] = time.time()
            elif data.get("action") in READ_ACTIONS:
                self._read_at[room_id] = time.time()
        except RuntimeError:  # emitted with no event loop running: no task to follow
            self._read_at[room_id] = time.time()
        return data

    async def _before_read(self, path: str, asked: ReadAsked) -> None:
        """A room that announced a reload starts reading its file: from now on it has read
        what the file holds."""
        if not self._announced or not asked.is_notebook_read(path):
            return
        reader = asyncio.current_task()
        for room_id, announcer in list(self._announced.items()):
            if announcer is reader:
                del self._announced[room_id]
                self._read_at[room_id] = time.time()
                self._following.spawn(self._save_if_behind(room_id, path), "following a reload")

    async def _save_if_behind(self, room_id: str, path: str) -> None:
        """Once the room holds what it is reading, save it if the file does not hold its
        notebook: a save that took the notebook before the reload and the loader's lock
        after its read wrote the older notebook, and the reload's own change starts no
        autosave (the room sets its document under its update lock)."""
        loaded = self._open_room(path)
        if loaded is None or loaded[0] != room_id:
            return
        room = loaded[1]
        lock = collaboration.loader_lock(collaboration.loader_of(room))
        async with lock:  # the read is over
            pass
        async with collaboration.update_lock(room):  # the reload is in the document
            pass
        async with lock:  # the saves that waited for the read are over
            notebook = collaboration.notebook_of(room)
            os_path = self._os_path(path)
            if notebook is None or os_path is None:
                return
            on_disk = await asyncio.to_thread(_read_notebook, os_path)
        if on_disk is not None and comparable(on_disk) == comparable(notebook_content(notebook)):
            return
        self._log.warning(
            "jupyter-loop: %s was saved with the notebook from before its reload; saving again",
            path,
        )
        saving = collaboration.save_now(room)
        if saving is not None:
            await saving

    def _after_save(self, model: Any, os_path: str, contents_manager: Any, **_: Any) -> None:
        written = written_stamp(contents_manager, os_path)
        own = written or file_stamp(os_path)
        if own is not None:
            self._own[os_path] = own
        if written is None or file_stamp(os_path) == written:
            return
        # Another program wrote the file the moment this save put it in place.
        path = to_api_path(os_path, contents_manager.root_dir)
        loaded = self._open_room(path)
        if loaded is not None and loaded[0] not in self._reloading:
            self._start_reload(*loaded, path, "was written just after a save")

    def _before_save(self, model: Any, path: str, contents_manager: Any, **_: Any) -> None:
        if not isinstance(model, dict) or model.get("type") != "notebook":
            return
        os_path = self._os_path(path)
        if os_path is None:  # no such path: the save itself will say so
            return
        self._check(path, os_path, file_stamp(os_path))

    def _check(self, path: str, os_path: str, found: FileStamp | None) -> None:
        """Refuse a save of ``path`` (409) while its open room has not read the file as it
        is now (``found``), and have the room reload it."""
        loaded = self._open_room(path) if path.endswith(".ipynb") else None
        if loaded is None:
            return
        room_id, room = loaded
        if self._reload_announced(room_id):
            raise HTTPError(
                409,
                f"{path} changed on disk and its open notebook is about to read it; "
                "save again once it shows the file's content.",
            )
        if room_id not in self._reloading:
            if found is None or found == self._own.get(os_path):
                return  # a new file, or the server's own last write
            read_at = self._read_at.get(room_id)
            if read_at is None or found[0] <= read_at * 1e9:
                return  # the room has read the file since it changed (or never said)
            self._start_reload(room_id, room, path, "was about to be saved over unread")
        raise HTTPError(
            409,
            f"{path} changed on disk and its open notebook is reloading it; "
            "save again once it shows the file's content.",
        )

    def _reload_announced(self, room_id: str) -> bool:
        """Whether the room announced a reload and has not begun to read the file (its
        announcing task gone: the reload was dropped, and the file's stamp decides)."""
        announcer = self._announced.get(room_id)
        if room_id in self._announced and (announcer is None or announcer.done()):
            del self._announced[room_id]
            return False
        return room_id in self._announced

    def _os_path(self, path: str) -> str | None:
        try:
            return str(self._contents._get_os_path(path))
        except Exception:  # no such path, or a manager without files
            return None

    def _open_room(self, path: str) -> tuple[str, Any] | None:
        """The notebook's loaded room (``None``: none, or no file id, which the save itself
        reports)."""
        try:
            return self._documents.loaded_room(path)
        except Exception:
            return None

    def _start_reload(self, room_id: str, room: Any, path: str, why: str) -> None:
        try:
            reload = asyncio.get_running_loop().create_task(self._reload(room_id, room, path))
        except RuntimeError:  # a save from a thread: the file's watcher reloads the room
            return
        self._reloading[room_id] = reload
        self._log.warning("jupyter-loop: %s changed on disk and %s; its room reloads it", path, why)

    async def _reload(self, room_id: str, room: Any, path: str) -> None:
        try:
            await collaboration.reload_file(room)
        except Exception as e:
            self._log.warning("jupyter-loop could not reload %s from disk: %s", path, e)
        finally:
            self._read_at[room_id] = time.time()
            self._reloading.pop(room_id, None)


def _read_notebook(os_path: str) -> dict[str, Any] | None:
    """The notebook in the file, ``None`` if it cannot be read as one."""
    try:
        with open(os_path, encoding="utf-8") as file:
            found: dict[str, Any] = nbformat.read(file, as_version=4)
        return found
    except Exception:
        return None
