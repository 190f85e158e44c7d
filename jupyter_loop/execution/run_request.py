"""The cells of one run request: found, checked, made jobs, shown queued.

Nothing here awaits: the execution service checks every cell of a request, queues their
jobs and marks them in one go, so the sources it checked are the sources queued, and a
request naming one unknown or non-code cell changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from jupyter_ydoc import YNotebook
from pycrdt import Map

from ..document import CellNotFound, find_cells, source_hash
from ..errors import BadRequest, SourceChanged
from . import board
from .payloads import RunRequest
from .run import CellJob
from .run_origin import RunOrigin


@dataclass(frozen=True)
class CellToRun:
    """A code cell a request names: where it is, its map, its id and its source now."""

    index: int
    ycell: Map
    cell_id: str
    source: str


def cells_to_run(notebook: YNotebook, cell_ids: Sequence[str]) -> list[CellToRun]:
    """The named cells, in the request's order.

    Raises:
        CellNotFound: A cell is not in the notebook.
        BadRequest: A cell is not a code cell.
    """
    located = find_cells(notebook, cell_ids)
    cells = []
    for cell_id in cell_ids:
        if cell_id not in located:
            raise CellNotFound(f"No cell with id '{cell_id}' in this notebook.")
        index, ycell = located[cell_id]
        if ycell.get("cell_type") != "code":
            raise BadRequest(f"Cell '{ycell.get('id')}' is not a code cell.")
        cells.append(CellToRun(index, ycell, str(ycell["id"]), str(ycell.get("source", ""))))
    return cells


def check_sources(cells: list[CellToRun], expected: dict[str, str]) -> None:
    """Raise :class:`SourceChanged` if a cell's source no longer has the expected hash."""
    changed = [
        cell.cell_id
        for cell in cells
        if cell.cell_id in expected and source_hash(cell.source) != expected[cell.cell_id]
    ]
    if changed:
        raise SourceChanged(changed)


def jobs_for(
    cells: list[CellToRun],
    room_id: str,
    user: str,
    request: RunRequest,
    *,
    starts_now: bool,
    origin: RunOrigin,
) -> list[CellJob]:
    """A job per requested cell, in order; an empty cell's is skipped, not queued. With
    ``starts_now`` (an idle queue) the first cell to run is marked running at once."""
    jobs: list[CellJob] = []
    first = starts_now
    for cell in cells:
        running = first and bool(cell.source.strip())
        first = first and not running
        approved = (request.source_hashes or {}).get(cell.cell_id)
        jobs.append(
            CellJob(
                room_id,
                cell.cell_id,
                cell.source,
                uuid.uuid4().hex,
                user,
                record_timing=request.record_timing,
                marked_running=running,
                approved_hash=approved,
                index_hint=cell.index,
                origin=origin,
            )
        )
    return jobs


def skipped(job: CellJob) -> bool:
    """An empty cell: nothing to run, shown done at once (as JupyterLab does)."""
    return not job.code.strip()


def mark(notebook: YNotebook, ycell: Map, job: CellJob, kernel_id: str) -> None:
    """Show the job's cell skipped, running (an idle kernel has it) or queued."""
    if skipped(job):
        board.mark_skipped(notebook, ycell, run_id=job.run_id)
        return
    state = board.RUNNING if job.marked_running else board.QUEUED
    board.mark_queued(
        notebook, ycell, run_id=job.run_id, kernel_id=kernel_id, by=job.by, state=state
    )
