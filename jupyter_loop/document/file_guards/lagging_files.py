"""A notebook file that lags its store is brought up to date before anyone reads it.

jupyter-collaboration keeps an open notebook twice on the server: in its store (each
update, within a moment) and in its file (saved ``document_save_delay`` after the last
change). The file lags whenever a room stops before that save: a room freed after its last
tab left cancels the save still waiting (``DocumentRoom.stop``), and a server killed
between a change and its save leaves it too. When the notebook is opened again, upstream
loads the store, finds the file "out-of-sync" and sets the document from the file. The
lines typed last vanished for every tab, and a tab that had typed offline meanwhile got
lines twice when it reconnected: its own, and the file's copy set by the server (chaos seed
2029, trials 171 and 232; ``tests/document/test_file_behind_store.py``).

The store knows which file it is ahead of. After each save the room writes the file's hash
into the document (``state.hash``), and the store keeps that write after everything the
save held. So when the file's hash is still the hash in the stored document, the file is
the room's last save and the store has all of it, and maybe more. Before such a file is
read while no room holds the notebook (the room's own load, an export, the CLI), the stored
notebook is saved over it: a real save, atomic, with its hooks and a kept version. A file
whose hash is another was written by someone else (a ``git checkout``), and it wins, as
upstream decides.

Items the server took from a tab whose earlier updates it never got (the tab went offline
mid-sync) are shown by pycrdt and saved, but the store cannot hold them (Yjs holds them
back as pending). The catch-up drops them from the file; the tab sends them again, whole,
when it reconnects.

Both upstream steps, with minimal reproductions: ``docs/upstream/file-behind-store.md``.

Rejected: keeping the store at a room's load without saving (a copy of upstream's
``DocumentRoom.initialize``, where that choice is made), and saving a room before it is
freed (upstream has no hook between its clean-up delay and ``stop``, and a killed server
runs none).

Guarded by ``tests/document/test_file_behind_store.py``.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import logging
from pathlib import Path
from typing import Any

import nbformat
from jupyter_server.utils import ensure_async
from jupyter_ydoc import YNotebook

from ...reads import ReadAsked, WaitingReads
from .. import collaboration
from ..one_pass import notebook_content
from ..reference import canonical_path


def comparable(notebook: dict[str, Any]) -> dict[str, Any]:
    """``notebook`` without what a room and a file differ in without a change: the cells'
    ``trusted`` marks (set by the reader from the signature) and the empty language and
    kernel entries jupyter_ydoc adds.

    >>> held = {"metadata": {"language_info": {"name": ""}},
    ...         "cells": [{"metadata": {"trusted": False}, "source": "x"}]}
    >>> comparable(held) == comparable({"metadata": {}, "cells": [{"metadata": {}, "source": "x"}]})
    True
    """
    found = copy.deepcopy(notebook)
    metadata = found.setdefault("metadata", {})
    metadata.setdefault("language_info", {"name": ""})
    metadata.setdefault("kernelspec", {"name": "", "display_name": ""})
    for cell in found.get("cells", []):
        cell.get("metadata", {}).pop("trusted", None)
    return found


class LaggingFiles:
    """The step before each notebook read that brings a lagging file up to date."""

    def __init__(self, settings: dict[str, Any], contents_manager: Any, log: logging.Logger):
        self._settings = settings
        self._contents = contents_manager
        self._log = log
        self._lock = asyncio.Lock()  # one catch-up at a time: reads of one file wait for it

    def start(self) -> None:
        if isinstance(self._contents, WaitingReads):
            self._contents.wait_before_reads(self._before_read)

    async def _before_read(self, path: str, asked: ReadAsked) -> None:
        if not asked.is_notebook_read(path):
            return
        try:
            await self.catch_up(path)
        except Exception as e:  # the read goes on with the file as it is
            self._log.warning("jupyter-loop could not compare %s with its store: %s", path, e)

    async def catch_up(self, path: str) -> bool:
        """Save the stored notebook over the file at ``path`` if the file lags it (see
        the module docstring); whether it did."""
        extension = collaboration.extension(self._settings)
        file_ids = self._settings.get("file_id_manager")
        if extension is None or file_ids is None:
            return False
        path = canonical_path(path)
        file_id = file_ids.get_id(path)
        if file_id is None:
            return False
        async with self._lock:
            room = collaboration.rooms(extension).get(f"json:notebook:{file_id}")
            if room is not None and collaboration.notebook_of(room) is not None:
                return False  # a loaded room holds the notebook, and saves it itself
            stored = await collaboration.stored_document(extension, str(file_id))
            if stored is None:
                return False
            held = YNotebook(stored)
            if not held.hash:
                return False  # never saved from a room: nothing says which file it knew
            os_path = Path(self._contents._get_os_path(path))
            content = await asyncio.to_thread(os_path.read_bytes)
            algorithm = getattr(self._contents, "hash_algorithm", "sha256")
            if hashlib.new(algorithm, content).hexdigest() != held.hash:
                return False  # written by someone else since: the file wins
            on_disk = comparable(nbformat.reads(content, as_version=4))
            if on_disk == comparable(notebook_content(held)):  # one pass, not ``get``'s O(N²)
                return False
            notebook = held.get()  # as upstream saves it (a duplicate id renamed)
            self._log.warning(
                "jupyter-loop: %s lags the notebook in the collaboration store (its room "
                "stopped before saving); saving the stored notebook before it is read",
                path,
            )
            model = {"type": "notebook", "format": "json", "content": notebook}
            await ensure_async(self._contents.save(model, path))
            return True
