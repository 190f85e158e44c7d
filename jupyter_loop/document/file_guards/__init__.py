"""What keeps a notebook's file and its live document from undoing each other: a save the
room did not see, a save the tab's hash check would miss, a file that lags its room's store,
and a tab back from offline after the file was reloaded under it.

Each guard hooks the contents manager, and the order they hook it in matters, so one
function starts them all (:func:`start_file_guards`) and says why at each step; the server
extension starts it and stops what it returns. Rejected: the extension building the six
guards itself, in a hand-kept order among its other services (a new guard had to find its
place there by reading every comment).

Guarded by the tests in ``tests/document/`` named in each guard's own docstring (they run
with every guard started, as a server starts them), and by ``tests/testing/test_chaos.py``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tornado.ioloop import IOLoop

from ..known_files import KnownFiles
from ..live import LiveDocuments
from .file_reloads import RELOAD_BYTES_KEPT, RELOADS_KEPT, FileReloads
from .kept_reloads import KeptReloads
from .lagging_files import LaggingFiles
from .missed_reloads import MissedReloads
from .returning_tabs import Keep, ReturningTabs
from .saved_hashes import SavedHashes


@dataclass(frozen=True)
class FileGuards:
    """The started guards the server stops when it shuts down (the others need no stop)."""

    missed_reloads: MissedReloads
    saved_hashes: SavedHashes
    returning_tabs: ReturningTabs
    reloads: FileReloads

    async def stop(self) -> None:
        """Stop each, the later ones even when an earlier one fails."""
        try:
            await self.saved_hashes.stop()
        finally:
            try:
                await self.missed_reloads.stop()
            finally:
                await self.reloads.stop()


def start_file_guards(
    documents: LiveDocuments,
    known_files: KnownFiles,
    contents_manager: Any,
    settings: dict[str, Any],
    data_dir: Path,
    keep_offline_edits: Keep,
    log: logging.Logger,
) -> FileGuards:
    """Hook every guard to the contents manager, in the order they must see a save.

    ``keep_offline_edits`` is what a returning tab's edits of reloaded cells become (the
    agent's proposals): passed in, so this room does not import the agent above it.
    """
    # First among the save hooks: a save it refuses must not be half recorded by others.
    missed_reloads = MissedReloads(documents, settings, log)
    missed_reloads.start(contents_manager)
    known_files.start(contents_manager, settings.get("event_logger"))
    # A tab's Save must not find the file changed by the server's own saves.
    saved_hashes = SavedHashes(settings, log)
    saved_hashes.start(contents_manager)
    # A file its room stopped before saving is saved from the store before it is read.
    LaggingFiles(settings, contents_manager, log).start()
    # A tab back from offline after its file was reloaded: its edits of what changed
    # meanwhile are offered back as proposals, not merged into the file's cells.
    kept = KeptReloads(data_dir / "reloads", keep=RELOADS_KEPT, max_bytes=RELOAD_BYTES_KEPT)
    reloads = FileReloads(settings, log, kept)
    reloads.start(contents_manager)
    returning_tabs = ReturningTabs(settings, reloads, keep_offline_edits, log)
    # jupyter_server_ydoc makes its rooms' server as it loads, after us: the loop's
    # first turn comes once every extension has loaded, before any request is served.
    IOLoop.current().add_callback(returning_tabs.watch_rooms)
    return FileGuards(missed_reloads, saved_hashes, returning_tabs, reloads)
