"""What the start and the end of a run write into the cell, beside its outputs.

The queue decides when; these functions say what, inside the caller's transaction (one
update for every tab), except :func:`write_failure`, the last resort that makes its own.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map

from ..document import CellNotFound, LiveDocuments, find_cell, find_cells, writing
from . import board
from .outputs.writes import output_map
from .run import CellJob, CellRun, RunOutcome

NOTE_PREFIX = "[jupyter-loop] "
"""Starts the line that tells, in the cell's stderr, why a run ended as it did."""


def failure_note(doing: str, error: Exception) -> str:
    """What went wrong, in the words a user sees in the cell.

    >>> failure_note("connecting to the kernel", TypeError("no kernel_id"))
    'jupyter-loop failed while connecting to the kernel: TypeError: no kernel_id'
    >>> failure_note("running this cell", TimeoutError())
    'jupyter-loop failed while running this cell: it timed out'
    """
    timed_out = isinstance(error, (TimeoutError, asyncio.TimeoutError))  # one on 3.11+
    detail = str(error) or ("it timed out" if timed_out else "")
    name = "" if timed_out else f"{type(error).__name__}: "
    return f"jupyter-loop failed while {doing}: {name}{detail}".rstrip(": ")


def note_line(note: str) -> str:
    """The stderr line a run's note is shown as.

    >>> note_line("The kernel died while this cell was running.")
    '[jupyter-loop] The kernel died while this cell was running.\\n'
    """
    return f"{NOTE_PREFIX}{note}\n"


def source_of(notebook: YNotebook, job: CellJob) -> str | None:
    """The cell's source now; ``None`` if it is gone or no longer a code cell."""
    try:
        _, ycell = find_cell(notebook, job.cell_id, job.index_hint)
    except CellNotFound:
        return None
    return str(ycell.get("source", "")) if ycell.get("cell_type") == "code" else None


def mark_handed_over(notebook: YNotebook, job: CellJob) -> None:
    """Clear a cell handed to the kernel and show it running, if it is still there."""
    try:
        _, ycell = find_cell(notebook, job.cell_id, job.index_hint)
    except CellNotFound:
        return
    if ycell.get("cell_type") == "code":
        board.mark_started(notebook, ycell, job.run_id)


def mark_dropped(notebook: YNotebook, jobs: list[CellJob], log: logging.Logger) -> None:
    """Show one notebook's dropped cells idle, in one transaction (one update for tabs)."""
    located = find_cells(notebook, [job.cell_id for job in jobs])
    with writing(notebook):
        for job in jobs:
            if job.cell_id not in located:
                continue
            try:
                _, ycell = located[job.cell_id]
                board.mark_done(notebook, ycell, run_id=job.run_id, status="aborted")
            except Exception:  # one cell failing must not leave the others marked queued
                log.exception("jupyter-loop could not mark %s as dropped", job.cell_id)


def mark_finished(notebook: YNotebook, ycell: Map, run: CellRun, outcome: RunOutcome) -> None:
    """Count, state, marker and timing of an ended run; ``set_next_input`` honoured."""
    job = run.job
    board.mark_done(
        notebook,
        ycell,
        run_id=job.run_id,
        status=outcome.status,
        execution_count=outcome.execution_count,
        note=outcome.note,
    )
    board.set_timing(ycell, run.timing if job.record_timing else None)
    _apply_payload(notebook, ycell, outcome.payload)


async def write_failure(
    docs: LiveDocuments, job: CellJob, outcome: RunOutcome, log: logging.Logger
) -> None:
    """Last resort when the writer failed: the note and the done marker, directly."""
    try:
        notebook = await docs.notebook(job.room_id)
        _, ycell = find_cell(notebook, job.cell_id)
        with writing(notebook):
            outputs = ycell.get("outputs")
            if isinstance(outputs, Array) and outcome.note:
                stderr = {"output_type": "stream", "name": "stderr"}
                outputs.append(output_map({**stderr, "text": note_line(outcome.note)}))
            board.mark_done(
                notebook, ycell, run_id=job.run_id, status=outcome.status, note=outcome.note
            )
    except Exception:
        log.exception("jupyter-loop could not mark cell %s as failed", job.cell_id)


def _apply_payload(notebook: YNotebook, ycell: Map, payload: list[dict[str, Any]]) -> None:
    """Honour ``set_next_input`` (``%load``, ``%recall``), as JupyterLab's executor does."""
    for item in payload:
        if item.get("source") != "set_next_input":
            continue
        text = str(item.get("text", ""))
        if item.get("replace"):
            source = ycell["source"]
            del source[0 : len(source)]
            source += text
            return
        index, _ = find_cell(notebook, str(ycell["id"]))
        new_cell = notebook.create_ycell(
            {"cell_type": "code", "source": text, "metadata": {"trusted": False}}
        )
        notebook.ycells.insert(index + 1, new_cell)
        return
