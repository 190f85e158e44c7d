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

The hooks stay cheap on the event loop: the pre-save hook reads the file's status (and an
out-of-band file's bytes, which the save is about to replace) and digests the cells'
sources from the save's model; the post-save hook reads the file it wrote (at once: an
editor writing in place a moment later must not be kept as the server's save). On a loaded
machine even that can be too late: a file whose stamp is not the one the save's rename left
(``saves``) was written by another program in between, so the save is kept from its model
and that file is left to the next save's check, which keeps it as found on disk. Hashing,
compressing and SQLite run on one worker thread, in the order of the saves.
Rejected: recording from the room (``DocumentRoom`` events): a tab's Save, a ``PUT`` of
the contents API and a room evicted before its save would be missed.

A restore of a notebook nobody has open saves the version through the contents manager
(also when its room is still loaded, by a run or the cleanup delay, but no tab or client
is connected: nobody could accept a proposal; the room then takes the version in, as with
``now``). When the notebook is open in a tab the restore is a proposal in the shared
document instead (``agent.proposals.VERSION``), shown at the top of the notebook in every
tab: a tab that accepts it puts the version in as one change of its own notebook, so undo
there (``Z`` in command mode, Edit > Undo) takes it back; accepted over REST it is set here.
Either way the room is saved first, so what the tabs showed is a version too. ``now``
restores an open notebook at once (scripts, the chaos of a test): it saves the version
through the contents manager, then sets it into the shared document in one transaction.
Rejected: setting the document and letting the room save it: the room may still be taking
in an earlier out-of-band write, which then replaced the restore (seen in ``test_cli``).
Rejected: one cell proposal per changed cell (the assistant's proposals): a proposal
carries a cell's source only, so outputs, attachments, cell types and the notebook's
metadata could not come back, and undoing a Delete All of 80 cells would take 80 accepts.

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

from ...agent import proposals
from ...document import LiveDocuments, canonical_path, writing
from ...errors import Conflict, JupyterLoopError, NotFound
from ...saves import FileStamp, file_stamp, written_stamp
from .store import (
    ON_DISK,
    RESTORED,
    SAVED,
    Digest,
    Version,
    VersionStore,
    cells_digest,
    shape_digest,
)


@dataclass(frozen=True)
class SaveUnderWay:
    """What the pre-save hook hands the post-save hook: the save's cells digest, and its
    content (serialized only if another program wrote the file before the hook read it)."""

    digest: Digest
    content: dict[str, Any]


@dataclass(frozen=True)
class Restored:
    """What a restore did: the version brought back, whether open tabs saw it live, the
    version the restore's own save made (``None`` if the file already held those bytes or
    nothing was saved yet), and the proposal that waits in the open notebook (``None``
    when the version was put in at once)."""

    path: str
    restored: int
    live: bool
    version: Version | None
    proposal: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "restored": self.restored,
            "live": self.live,
            "version": self.version.to_json() if self.version is not None else None,
            "proposal": self.proposal,
        }


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
        self._saving: dict[str, SaveUnderWay] = {}  # by os path, pre- to post-save hook
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="versions")
        self._stopped = False

    def start(self) -> None:
        self._contents.register_pre_save_hook(self._before_save)
        self._contents.register_post_save_hook(self._after_save)

    async def stop(self) -> None:
        if self._stopped:  # a second signal runs the server's clean-up, and this, again
            return
        self._stopped = True
        try:
            await self.settle()
        except asyncio.CancelledError:  # stopping took too long: the saves left go unkept
            self._worker.shutdown(wait=False, cancel_futures=True)
            raise
        # Off the event loop, so a caller's time limit still holds.
        await asyncio.to_thread(self._worker.shutdown, True)
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
        content = model.get("content")
        if isinstance(content, dict):
            self._saving[os_path] = SaveUnderWay(shape_digest(content.get("cells")), content)
        found = file_stamp(os_path)
        if found is None or self._written.get(os_path) == found:
            return  # a new file, or the server's own last write (kept already)
        try:
            with open(os_path, "rb") as file:
                content = file.read()
            self._submit(self._keep_found, canonical_path(path), content)
        except (OSError, JupyterLoopError):
            return

    def _after_save(self, model: Any, os_path: str, contents_manager: Any, **_: Any) -> None:
        if not isinstance(model, dict) or model.get("type") != "notebook":
            return
        saving = self._saving.pop(os_path, None)
        try:
            path = canonical_path(to_api_path(os_path, contents_manager.root_dir))
            # Read here, not on the worker: an out-of-band write a moment after the save
            # (an editor writing in place) would otherwise be kept as this save.
            with open(os_path, "rb") as file:
                content = file.read()
                status = os.fstat(file.fileno())
        except (JupyterLoopError, ValueError, OSError):
            return
        found: FileStamp = (status.st_mtime_ns, status.st_size, status.st_ino)
        left = written_stamp(contents_manager, os_path)
        restored_from = self._restoring.pop(path, None)
        kind = SAVED if restored_from is None else RESTORED
        if left is not None and left != found and saving is not None:
            # Another program wrote the file after the save and before this hook (seen on a
            # loaded machine): keep the save from its model; its file is kept as found on
            # disk when the next save replaces it.
            self._written[os_path] = left
            self._submit(self._keep_model, path, saving.content, kind, restored_from, saving.digest)
            return
        self._written[os_path] = found
        digest = saving.digest if saving is not None else None
        self._submit(self._keep, path, content, kind, restored_from, digest)

    def _submit(self, function: Any, *args: Any) -> None:
        try:
            self._worker.submit(function, *args)
        except RuntimeError:  # stopping: the worker takes no more
            return

    def _keep(
        self,
        path: str,
        content: bytes,
        kind: str,
        restored_from: int | None,
        shape: Digest | None,
    ) -> None:
        try:
            self.store.add(path, content, kind, restored_from=restored_from, digest=shape)
        except Exception as e:  # a version not kept must never fail a save
            self._log.warning("jupyter-loop could not keep a version of %s: %s", path, e)

    def _keep_model(
        self,
        path: str,
        notebook: dict[str, Any],
        kind: str,
        restored_from: int | None,
        digest: Digest,
    ) -> None:
        """Keep a save whose file another program has replaced, written as jupyter_server
        writes a notebook (``nbformat.write``)."""
        try:
            text = nbformat.writes(nbformat.from_dict(notebook), version=nbformat.NO_CONVERT)
        except Exception as e:
            self._log.warning("jupyter-loop could not keep a version of %s: %s", path, e)
            return
        text += "" if text.endswith("\n") else "\n"
        self._keep(path, text.encode("utf-8"), kind, restored_from, digest)

    def _keep_found(self, path: str, content: bytes) -> None:
        """Keep a file found on disk, if it is a notebook: one caught half-written by
        another program (or not JSON at all) could not be restored, only listed."""
        digest = cells_digest(content)
        if digest[0]:
            self._keep(path, content, ON_DISK, None, digest)

    # -- asking and restoring -----------------------------------------------------------

    async def versions(self, path: str) -> list[Version]:
        await self.settle()
        return await asyncio.to_thread(self.store.versions, canonical_path(path))

    async def notebook(self, path: str, number: int) -> tuple[Version, dict[str, Any]]:
        """A version and its notebook (JSON), as that save left it."""
        path = canonical_path(path)
        await self.settle()
        version = await asyncio.to_thread(self.store.version, path, number)
        # Read in a worker thread: a 16 MB version stalled every tab for 3 s on the loop.
        notebook = await asyncio.to_thread(self._read_version, path, number)
        if version is None or notebook is None:
            raise NotFound(f"'{path}' has no version {number} (see its list of versions).")
        return version, notebook

    def _read_version(self, path: str, number: int) -> dict[str, Any] | None:
        content = self.store.content(path, number)
        if content is None:
            return None
        try:
            return dict(nbformat.reads(content.decode("utf-8"), as_version=4))
        except Exception as e:
            raise Conflict(f"Version {number} of '{path}' is not a readable notebook: {e}") from e

    async def restore(self, path: str, number: int, by: str, *, now: bool = False) -> Restored:
        """Bring version ``number`` back as the notebook's content, or propose it in the
        open notebook (see the module docstring)."""
        path = canonical_path(path)
        version, notebook = await self.notebook(path, number)
        before = await asyncio.to_thread(self.store.versions, path)
        room_id = await self._open_room(path)
        tabs = room_id is not None and self._documents.has_tabs(room_id)
        if room_id is not None:
            await self._documents.saves.save(room_id)  # what the room holds becomes a version
            # A proposal only where someone can accept it: with no tab on the room (closed
            # ten minutes ago, the room kept by a run or the cleanup delay), the version is
            # written, as into a closed notebook, and the room follows.
            if not now and tabs:
                return await self._propose(path, room_id, version, notebook, by)
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
        if room_id is not None:
            # The file holds the version first, then the document: a reload of the room
            # from the file (an earlier out-of-band write it is still taking in, or its
            # next save finding our write) brings the same content, whatever the order.
            document = await self._documents.notebook(room_id)
            with writing(document):
                document.set(notebook)
        await self.settle()
        self._restoring.pop(path, None)  # the save wrote nothing (same bytes): no version
        after = await asyncio.to_thread(self.store.versions, path)
        made = after[0] if after and after[0].kind == RESTORED and after[:1] != before[:1] else None
        return Restored(path, number, tabs, made)

    async def _propose(
        self, path: str, room_id: str, version: Version, notebook: dict[str, Any], by: str
    ) -> Restored:
        document = await self._documents.notebook(room_id)
        with writing(document):
            proposed = proposals.propose_version(
                document,
                turn_id=proposals.RESTORE_TURN,
                number=version.number,
                content=notebook,
                summary=f"version {version.number}, asked by {by}",
            )
        await self.settle()
        return Restored(path, version.number, True, None, proposed.proposal.id)

    async def _open_room(self, path: str) -> str | None:
        """The notebook's room if it is loaded (tabs or a run have it), else ``None``."""
        try:
            ref = await self._documents.resolve(path)
        except NotFound:
            return None  # deleted: the restore brings the file back
        return ref.room_id if self._documents.is_loaded(ref.room_id) else None
