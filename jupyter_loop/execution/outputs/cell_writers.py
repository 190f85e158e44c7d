"""The output writers of one kernel's cells: one a cell, kept from run to run.

A cell's writer outlives its run because a display belongs to the kernel, not to the run
that showed it: a later run of any cell may update it in place (``update_display``), and
the writer of the cell that showed it is the one that knows where it is.
"""

from __future__ import annotations

import asyncio
import logging

from ...document import LiveDocuments
from .ops import UpdateDisplay
from .writer import CellWriter, OutputPolicy


class CellWriters:
    """The writers of the cells a kernel ran, by notebook room and cell id."""

    def __init__(
        self, docs: LiveDocuments, interval: float, policy: OutputPolicy, log: logging.Logger
    ) -> None:
        self._docs = docs
        self._interval = interval
        self._policy = policy
        self._log = log
        self._writers: dict[tuple[str, str], CellWriter] = {}

    def of(self, room_id: str, cell_id: str, index_hint: int | None = None) -> CellWriter:
        """The cell's writer, made at its first run."""
        key = (room_id, cell_id)
        writer = self._writers.get(key)
        if writer is None:
            writer = CellWriter(
                self._docs,
                room_id,
                cell_id,
                interval=self._interval,
                log=self._log,
                policy=self._policy,
                index_hint=index_hint,
            )
            self._writers[key] = writer
        return writer

    def update_display(self, op: UpdateDisplay) -> None:
        """Update the display wherever a cell of this kernel showed it."""
        for writer in self._writers.values():
            if writer.has_display(op.display_id):
                writer.push(op)

    async def close(self) -> None:
        await asyncio.gather(*(writer.close() for writer in self._writers.values()))
