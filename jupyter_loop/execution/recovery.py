"""After a server restart: end the runs the previous process left in flight.

Their markers may have come back with the room (from the YStore), and the cell that was
running lost whatever it would still have printed: it gets a visible note, queued cells
simply go back to idle. Whatever was saved before the restart stays.
"""

from __future__ import annotations

import logging

from jupyter_ydoc import YNotebook
from pycrdt import Map

from ..document import ORIGIN, LiveDocuments, find_cell
from ..errors import JupyterLoopError
from . import board
from .ledger import LedgerEntry
from .ops import AppendStream
from .writer import CellWriter

CUT_OFF = "This run was cut off by a restart of the Jupyter server; its later output is lost."


async def close_interrupted_runs(
    entries: list[LedgerEntry], docs: LiveDocuments, log: logging.Logger
) -> int:
    """Mark every listed run as ended; returns how many cells were changed."""
    changed = 0
    for entry in entries:
        try:
            changed += await _close(entry, docs, log)
        except JupyterLoopError as e:
            log.info("jupyter-loop could not close run %s: %s", entry.run_id, e.message)
    return changed


async def _close(entry: LedgerEntry, docs: LiveDocuments, log: logging.Logger) -> int:
    async with docs.pinned(entry.room_id):
        notebook = await docs.notebook(entry.room_id)
        marker = board.marker(notebook, entry.cell_id) or {}
        if marker.get("run_id") not in (None, entry.run_id):
            return 0  # the cell ran again since; that run owns the markers
        if entry.state == "running":
            writer = CellWriter(docs, entry.room_id, entry.cell_id, interval=0, log=log)
            writer.push(AppendStream("stderr", f"[jupyter-loop] {CUT_OFF}\n"))
            await writer.flush(then=lambda nb, ycell: _end(nb, ycell, entry, "cut_off"))
        else:
            _, ycell = find_cell(notebook, entry.cell_id)
            with notebook.ydoc.transaction(origin=ORIGIN):
                _end(notebook, ycell, entry, "aborted")
        await docs.save(entry.room_id)
    log.info("jupyter-loop closed run %s of cell %s", entry.run_id, entry.cell_id)
    return 1


def _end(notebook: YNotebook, ycell: Map, entry: LedgerEntry, status: str) -> None:
    note = CUT_OFF if status == "cut_off" else None
    board.mark_done(notebook, ycell, run_id=entry.run_id, status=status, note=note)
