"""Execution markers in the shared notebook, so every tab shows the same queue.

Cells keep JupyterLab's own fields (``execution_state`` drives the ``[*]`` prompt,
``execution_count``); what JupyterLab has no field for (queued or running, who asked,
how the last run ended, a pending ``input()`` prompt) lives in a map beside the cells,
keyed by cell id. It is part of the shared document (synced to every tab, kept in the
YStore) but not of the ``.ipynb``.

All functions here mutate: call them inside a transaction with our origin.
"""

from __future__ import annotations

from dataclasses import replace

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map

from ..records import CellMarker, InputRequest

BOARD = "jupyter_loop:execution"
# The life of the notebook's kernel, rewritten when it begins a new one (``kernel.notices``).
KERNEL_LIFE = "jupyter_loop:kernel_life"

QUEUED, RUNNING, DONE = "queued", "running", "done"


def board(notebook: YNotebook) -> Map:
    return notebook.ydoc.get(BOARD, type=Map)


def marker(notebook: YNotebook, cell_id: str) -> CellMarker | None:
    """The cell's marker, ``None`` for a cell jupyter-loop never marked."""
    value = board(notebook).get(cell_id)
    return CellMarker.from_y(value) if isinstance(value, dict) else None


def owned_by(notebook: YNotebook, cell_id: str, run_id: str) -> bool:
    """Whether the cell's markers are the run's to change: marked by it, or by no run
    (False once the cell was queued again: that later run owns them)."""
    found = marker(notebook, cell_id)
    return found is None or found.run_id in ("", run_id)


def shown_run(notebook: YNotebook, cell_id: str) -> str:
    """The run whose outputs the cell shows (or is about to: a run queued or running);
    ``"file"`` for a cell jupyter-loop never ran, whose outputs came with the file."""
    found = marker(notebook, cell_id)
    return found.run_id or "file" if found else "file"


def note_kernel_life(notebook: YNotebook, kernel_run: str) -> None:
    """The notebook's kernel began the life ``kernel_run``: tabs watching this map ask
    for the stale marks again."""
    notebook.ydoc.get(KERNEL_LIFE, type=Map)["kernel_run"] = kernel_run


def _put(notebook: YNotebook, cell_id: str, record: CellMarker) -> None:
    board(notebook)[cell_id] = record.to_y()


def mark_queued(
    notebook: YNotebook,
    ycell: Map,
    *,
    run_id: str,
    kernel_id: str,
    by: str,
    state: str = QUEUED,
) -> None:
    """Show the cell queued (``[*]``, as JupyterLab does when a run is scheduled).

    ``state`` is ``running`` for a cell that starts at once (an idle queue): its outputs
    and count are cleared now, in one write instead of two. A cell that waits keeps
    them until its run starts (:func:`mark_started`), so a cell queued again while it
    runs ends up with the outputs of its last run only.
    """
    if state == RUNNING:
        clear_execution(ycell)
    ycell["execution_state"] = "running"
    _put(notebook, str(ycell["id"]), CellMarker(state, run_id, kernel_id=kernel_id, by=by))


def mark_started(notebook: YNotebook, ycell: Map, run_id: str) -> None:
    """A queued run starts: clear the cell's outputs and count, show it running.

    The run takes the markers over even from a later run of the same cell (queued again
    meanwhile): every tab waiting for this run sees it start, then end.
    """
    clear_execution(ycell)
    ycell["execution_state"] = "running"
    cell_id = str(ycell["id"])
    entry = marker(notebook, cell_id)
    if entry is None or entry.run_id != run_id:
        entry = CellMarker(RUNNING, run_id)
    _put(notebook, cell_id, replace(entry, state=RUNNING))


def mark_done(
    notebook: YNotebook,
    ycell: Map,
    *,
    run_id: str,
    status: str,
    execution_count: int | None = None,
    note: str | None = None,
) -> None:
    """End a run: count and idle state together (an early count would clear ``[*]``)."""
    cell_id = str(ycell["id"])
    if not owned_by(notebook, cell_id, run_id):
        return  # the cell was queued again since: that run owns the markers now
    entry = marker(notebook, cell_id)
    if execution_count is not None:
        ycell["execution_count"] = execution_count
    ycell["execution_state"] = "idle"
    # who ran it (a user, or the agent for one) stays visible
    by = entry.by if entry is not None else None
    done = CellMarker(DONE, run_id, by=by or None, status=status, note=note or None)
    _put(notebook, cell_id, done)


def mark_skipped(notebook: YNotebook, ycell: Map, *, run_id: str) -> None:
    """An empty cell: cleared and done at once, as JupyterLab does."""
    clear_execution(ycell)
    ycell["execution_state"] = "idle"
    _put(notebook, str(ycell["id"]), CellMarker(DONE, run_id, status="ok"))


def set_input_request(notebook: YNotebook, cell_id: str, request: InputRequest | None) -> None:
    entry = marker(notebook, cell_id)
    if entry is None:
        return
    _put(notebook, cell_id, replace(entry, input=request))


def set_timing(ycell: Map, timing: dict[str, str] | None) -> None:
    metadata = ycell.get("metadata")
    if not isinstance(metadata, Map):
        return
    if timing:
        metadata["execution"] = timing
    elif "execution" in metadata:
        del metadata["execution"]


def clear_execution(ycell: Map) -> None:
    """Empty the cell's outputs and count (a run starts, or is replayed from its start)."""
    outputs = ycell.get("outputs")
    if isinstance(outputs, Array):
        if len(outputs):
            outputs.clear()
    else:
        ycell["outputs"] = Array()
    ycell["execution_count"] = None
