"""A cell's run history as the History view and the stale marks use it: each run with
where its outputs can be seen, why outputs are stale, and a run's source proposed back.

The HTTP face is ``history/handlers.py`` (and ``GET history`` in
``status_handlers.py``); the records come from the run history (``execution/history.py``)
through the execution service. A restored source, or restored outputs, is a proposal
made the way the assistant makes one (``agent/proposals.py``): a card with accept and
undo, nothing written to the cell until a user accepts.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from jupyter_ydoc import YNotebook

from ..agent import proposals
from ..agent.proposals import RESTORE_TURN
from ..document import CellNotFound, find_cell, source_hash, writing
from ..document.reference import NotebookRef
from ..errors import Conflict, NotFound
from ..execution.full_outputs.run_record import run_links
from ..execution.full_outputs.store import FileOutputStore, RunKey
from ..execution.outputs.cell_outputs import fitted
from ..execution.outputs.traits import OUTPUTS_PATH
from ..execution.outputs.writer import OutputPolicy
from ..execution.run_origin import RunEntry, outputs_digest
from ..notebook_view.snapshot import sources_with_outputs


@dataclass(frozen=True)
class RestoreRequest:
    """What a History view asks to put back: a run of a cell, on behalf of ``by``."""

    path: str
    cell_id: str
    run_id: str
    by: str


def runs_payload(
    runs: list[RunEntry], notebook: YNotebook | None, store: FileOutputStore | None
) -> list[dict[str, Any]]:
    """Each run as ``GET history`` answers it, with where its outputs can be seen:
    ``outputs_shown`` (the cell shows this run's outputs now; ``None`` without
    ``notebook``) and ``outputs_url`` (the full-output store keeps its record: a cell's
    last few runs)."""
    digests: dict[str, str] = {}
    payload = []
    for run in runs:
        if notebook is not None and run.cell_id not in digests:
            try:
                digests[run.cell_id] = outputs_digest(find_cell(notebook, run.cell_id)[1])
            except CellNotFound:
                digests[run.cell_id] = ""
        file_id = NotebookRef.of_room(run.room_id).file_id
        shown = (
            None
            if notebook is None
            else bool(run.outputs_digest) and digests[run.cell_id] == run.outputs_digest
        )
        payload.append(
            {
                **run.to_json(),
                "outputs_shown": shown,
                "outputs_url": _kept_url(store, file_id, run) if store is not None else None,
            }
        )
    return payload


def _kept_url(store: FileOutputStore, file_id: str, run: RunEntry) -> str | None:
    try:
        store.parts(RunKey(file_id, run.cell_id, run.run_id))
    except NotFound:
        return None
    return f"{OUTPUTS_PATH}/{file_id}/{run.cell_id}/{run.run_id}"


async def stale_marks(execution: Any, history: Any, path: str) -> dict[str, Any]:
    """Why each cell's outputs are stale, by cell id (``GET stale``)."""
    room_id, notebook = await execution.live_notebook(path)
    if history is not None:  # a run that just ended is in (its record waits a batch)
        await asyncio.to_thread(history.settle)
    marks: dict[str, Any] = await execution.stale_marks(room_id, sources_with_outputs(notebook))
    return marks


async def _run_of(execution: Any, path: str, cell_id: str, run_id: str) -> RunEntry:
    runs = await execution.history(path, cell_id, 1000)
    run = next((r for r in runs if r.run_id == run_id), None)
    if run is None:
        raise NotFound(f"Cell '{cell_id}' has no run '{run_id}' in the history.")
    return run


async def propose_run_outputs(execution: Any, request: RestoreRequest) -> dict[str, Any]:
    """Propose on the cell the outputs its run ``run_id`` ended with, as the full-output
    store keeps them (masked as the notebook had them) and as the cell held them: a run
    the notebook's budget cut comes back cut the same way, its stand-ins linking to the
    full output. Returns the proposal as created.

    Raises:
        NotFound: No such run, or its outputs are no longer kept.
        Conflict: The store lost part of the run (over its own limit).
    """
    run = await _run_of(execution, request.path, request.cell_id, request.run_id)
    policy: OutputPolicy = execution.output_policy
    if policy.store is None:
        raise NotFound("This server keeps no outputs of earlier runs.")
    key = RunKey(NotebookRef.of_room(run.room_id).file_id, run.cell_id, run.run_id)
    whole = await asyncio.to_thread(policy.store.outputs, key, None)
    outputs = fitted(whole, policy.budget, run_links(policy.link_prefix, key))
    _, notebook = await execution.live_notebook(request.path)
    with writing(notebook):
        try:
            proposed = proposals.propose_outputs(
                notebook,
                turn_id=RESTORE_TURN,
                cell_id=request.cell_id,
                outputs=outputs,
                summary=f"Restore the outputs of run {run.run_id} (History, {request.by})",
            )
        except CellNotFound:
            raise NotFound(f"The notebook has no cell '{request.cell_id}' any more.") from None
    return {**proposed.proposal.to_y(), "replaced": list(proposed.replaced)}


async def propose_run_source(execution: Any, request: RestoreRequest) -> dict[str, Any]:
    """Propose on the cell the source its run ``run_id`` ran; the proposal as created."""
    path, cell_id, run_id, by = request.path, request.cell_id, request.run_id, request.by
    run = await _run_of(execution, path, cell_id, run_id)
    if source_hash(run.source) != run.source_hash:
        raise Conflict(
            "This run's source held a secret; the history keeps it masked, so it "
            "cannot be restored."
        )
    _, notebook = await execution.live_notebook(path)
    try:
        _, ycell = find_cell(notebook, cell_id)
    except CellNotFound:
        raise NotFound(f"The notebook has no cell '{cell_id}' any more.") from None
    if str(ycell.get("source", "")) == run.source:
        raise Conflict("The cell's source is already the source of this run.")
    with writing(notebook):
        proposed = proposals.create(
            notebook,
            turn_id=RESTORE_TURN,
            kind="modify",
            cell_id=cell_id,
            new_source=run.source,
            summary=f"Restore the source of run {run_id} (History, {by})",
        )
    return {**proposed.proposal.to_y(), "replaced": list(proposed.replaced)}
