"""Whether a run's outputs must be written whole again: its notebook reloaded from its file.

A ``git checkout`` (or any out-of-band write) makes jupyter-collaboration reload the
notebook, which replaces the running cell's outputs with the file's. The run owns its
cell's outputs: the file's, or a cell the reload cleared, would otherwise show only the
lines printed since, after the file's. So while a reload may still land, every batch of
the run is written over the cell from the run's journal (:class:`~.writer.CellWriter`).

A tab that clears the outputs mid-run is not a reload: lines printed since show.
"""

from __future__ import annotations

import time

from ...document import LiveDocuments

RELOAD_SECONDS = 3.0
"""How long after jupyter-collaboration says it reloads a notebook from its file the
reload may still come (it reads the file first)."""


class RunReloads:
    """The reloads of one run's room, as the run's batches ask about them."""

    def __init__(self, docs: LiveDocuments, room_id: str, *, running: bool) -> None:
        self._docs = docs
        self._room_id = room_id
        self._seen = docs.overwrites(room_id)
        # A reload announced just before this run began may land after the run cleared
        # its cell (the watcher reads the file first), and put the file's outputs back
        # before the run's lines (chaos seed 2039 trial 682).
        self._heard_at = self._still_coming() if running else None

    def heard(self) -> bool:
        """Whether this batch must write the run over the cell's outputs."""
        reloads = self._docs.overwrites(self._room_id)
        if reloads != self._seen:
            self._seen, self._heard_at = reloads, time.monotonic()
        heard = self._heard_at
        if heard is None:
            return False
        # The event comes before jupyter-collaboration reads the file and replaces the
        # notebook, and a replaced cell cannot always be told from ours by its size (the
        # file's outputs may have the very length we wrote, as seen in CI): until the
        # reload has surely landed, every batch writes the run over the cell, and the
        # first batch after that does once more.
        if time.monotonic() - heard > RELOAD_SECONDS:
            self._heard_at = None
        return True

    def give_up(self) -> None:
        """The run cannot be written whole (its journal kept part of it): what comes next
        shows after what the cell holds."""
        self._heard_at = None

    def _still_coming(self) -> float | None:
        """When the room's last reload was announced, if it may still land."""
        heard = self._docs.overwritten_at(self._room_id)
        return heard if heard is not None and time.monotonic() - heard <= RELOAD_SECONDS else None
