"""Keep a version at every save of a notebook, and bring one back.

Both ways a notebook is written go through the contents manager: the room's autosave and
jupyter-loop's forced saves (``DocumentRoom`` → ``contents_manager.save``) and a tab's
Save or any ``PUT /api/contents``. So two save hooks (jupyter_server's public API) see them
all:

* after a save, the file as written is kept (:data:`~.store.SAVED`);
* before a save, if the file on disk is not the one the server last wrote (its size,
  modification time or inode differ, or this process has not written it yet), it is read
  and kept too (:data:`~.store.ON_DISK`) unless it is the newest version already. That is
  the content of an out-of-band write (git, another editor, a sync client) that the save
  is about to replace.

The hooks only read the file's status (and, for an out-of-band file, its bytes, which
must be read before the save replaces them); hashing, compressing and SQLite run on one
worker thread, in the order the saves happened. Rejected: recording from the room
(``DocumentRoom`` events): a tab's Save, a ``PUT`` of the contents API and a room
evicted before its save would be missed.

A restore when the notebook is open (its room is loaded) first saves the room, so what
the tabs showed is a version, then sets the version's cells into the shared document in
one transaction (every tab sees it at once) and saves; when it is not open, it saves the
version through the contents manager. Either way the version replaced is kept, so a
restore is undone by restoring that one. Rejected: one cell proposal per changed cell
(the assistant's proposals): a proposal carries a cell's source only, so outputs,
attachments, cell types and the notebook's metadata could not come back, and undoing a
Delete All of 80 cells would take 80 accepts.

Notebooks saved by a contents manager that does not write local files (no post-save hook
with a file path) have no versions.
"""

from __future__ import annotations

import asyncio
import logging
import os
import posixpath
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import nbformat
from jupyter_server.utils import ensure_async, to_api_path

from ..document import ORIGIN, LiveDocuments, canonical_path
from ..errors import Conflict, JupyterLoopError, NotFound
from .store import ON_DISK, RESTORED, SAVED, Version, VersionStore

FileStamp = tuple[int, int, int]
"""``(st_mtime_ns, st_size, st_ino)``: a file the server wrote, as it left it."""


@dataclass(frozen=True)
class Restored:
    """What a restore did: the version brought back, whether open tabs saw it live, and the
    version the restore's own save made (``None`` if the file already held those bytes)."""

    path: str
    restored: int
    live: bool
    version: Version | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "restored": self.restored,
            "live": self.live,
            "version": self.version.to_json() if self.version is not None else None,
        }


def stamp(os_path: str) -> FileStamp | None:
    try:
        status = os.stat(os_path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size, status.st_ino)


class VersionKeeper:
    """Records versions from the contents manager's save hooks; lists and restores them."""

    def __init__(
        self,
        store: VersionStore,
        documents: LiveDocuments,
        contents_manager: Any,
        log: logging.Logger,
    ) -> None:
        self.store = store
        self._documents = documents
        self._contents = contents_manager
        self._log = log
        self._written: dict[str, FileStamp] = {}
        self._restoring: dict[str, int] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="versions")

    def start(self) -> None:
        self._contents.register_pre_save_hook(self._before_save)
        self._contents.register_post_save_hook(self._after_save)

    async def stop(self) -> None:
        await self.settle()
        self._worker.shutdown(wait=True)
        self.store.close()

    async def settle(self) -> None:
        """Wait until every save so far is kept (readers that must see it call this)."""
        await asyncio.wrap_future(self._worker.submit(lambda: None))

    # -- the save hooks (on the event loop: they must not raise, and must be quick) -----

    def _os_path(self, path: str) -> str | None:
        get_os_path = getattr(self._contents, "_get_os_path", None)
        if get_os_path is None:
            return None
        try:
            return str(get_os_path(path))
        except Exception:
            return None

    def _before_save(self, model: Any, path: str, **_: Any) -> None:
        if not isinstance(model, dict) or model.get("type") != "notebook":
            return
        os_path = self._os_path(path)
        if os_path is None:
            return
        found = stamp(os_path)
        if found is None or self._written.get(os_path) == found:
            return  # a new file, or the server's own last write (kept already)
        try:
            with open(os_path, "rb") as file:
                content = file.read()
        except OSError:
            return
        self._submit(self._keep, canonical_path(path), content, ON_DISK, None)

    def _after_save(self, model: Any, os_path: str, contents_manager: Any, **_: Any) -> None:
        if not isinstance(model, dict) or model.get("type") != "notebook":
            return
        written = stamp(os_path)
        if written is None:
            return
        self._written[os_path] = written
        try:
            path = canonical_path(to_api_path(os_path, contents_manager.root_dir))
        except (JupyterLoopError, ValueError):
            return
        restored_from = self._restoring.pop(path, None)
        kind = SAVED if restored_from is None else RESTORED
        self._submit(self._keep_file, path, os_path, kind, restored_from)

    def _submit(self, function: Any, *args: Any) -> None:
        try:
            self._worker.submit(function, *args)
        except RuntimeError:  # stopping: the worker takes no more
            return

    def _keep(self, path: str, content: bytes, kind: str, restored_from: int | None) -> None:
        try:
            self.store.add(path, content, kind, restored_from=restored_from)
        except Exception as e:  # a version not kept must never fail a save
            self._log.warning("jupyter-loop could not keep a version of %s: %s", path, e)

    def _keep_file(self, path: str, os_path: str, kind: str, restored_from: int | None) -> None:
        try:
            with open(os_path, "rb") as file:
                content = file.read()
        except OSError as e:
            self._log.warning("jupyter-loop could not read %s to keep a version: %s", path, e)
            return
        self._keep(path, content, kind, restored_from)

    # -- asking and restoring -----------------------------------------------------------

    async def versions(self, path: str) -> list[Version]:
        await self.settle()
        return await asyncio.to_thread(self.store.versions, canonical_path(path))

    async def notebook(self, path: str, number: int) -> tuple[Version, dict[str, Any]]:
        """A version and its notebook (JSON), as that save left it."""
        path = canonical_path(path)
        await self.settle()
        version = await asyncio.to_thread(self.store.version, path, number)
        content = await asyncio.to_thread(self.store.content, path, number)
        if version is None or content is None:
            raise NotFound(f"'{path}' has no version {number} (see its list of versions).")
        try:
            notebook = nbformat.reads(content.decode("utf-8"), as_version=4)
        except Exception as e:
            raise Conflict(f"Version {number} of '{path}' is not a readable notebook: {e}") from e
        return version, dict(notebook)

    async def restore(self, path: str, number: int) -> Restored:
        """Bring version ``number`` back as the notebook's content (see the module docstring)."""
        path = canonical_path(path)
        _, notebook = await self.notebook(path, number)
        room_id = await self._open_room(path)
        if room_id is not None:
            await self._documents.save(room_id)  # what the tabs show becomes a version
            document = await self._documents.notebook(room_id)
            with document.ydoc.transaction(origin=ORIGIN):
                document.set(notebook)
            self._restoring[path] = number
            await self._documents.save(room_id)
        else:
            folder = posixpath.dirname(path)
            if folder and not await ensure_async(self._contents.dir_exists(folder)):
                raise Conflict(f"The folder '{folder}' is gone; create it to restore '{path}'.")
            self._restoring[path] = number
            model = {"type": "notebook", "format": "json", "content": notebook}
            try:
                await ensure_async(self._contents.save(model, path))
            except Exception:
                self._restoring.pop(path, None)
                raise
        await self.settle()
        self._restoring.pop(path, None)  # the save wrote nothing (same bytes): no version
        newest = await asyncio.to_thread(self.store.versions, path)
        made = newest[0] if newest and newest[0].restored_from == number else None
        return Restored(path, number, room_id is not None, made)

    async def _open_room(self, path: str) -> str | None:
        """The notebook's room if it is loaded (tabs or a run have it), else ``None``."""
        try:
            ref = await self._documents.resolve(path)
        except NotFound:
            return None  # deleted: the restore brings the file back
        return ref.room_id if self._documents.is_loaded(ref.room_id) else None
