"""What a tab's History view and stale marks ask of the run history.

``GET /api/jupyter-loop/stale?path=``: why each cell's outputs are stale (edited since, or
the kernel restarted since), the marks the assistant's map and MCP's ``read_notebook``
carry. ``POST /api/jupyter-loop/history/restore`` ``{path, cell_id, run_id}``: propose the
source a run ran, as the assistant proposes an edit (a card with accept and undo).
:func:`runs_payload` is what ``GET history`` answers per run, with where its outputs are.

Why a GET rather than a record the server writes into the shared document: whether
outputs are stale changes when a user types (the source now against the source the last
run ran) and when a kernel restarts, and only the server knows both (the run history
and the kernel's start). Writing a mark per cell at each keystroke would put a
server-side edit into every tab's document for what is a view; rejected too: hashing
the source in the browser against a hash the server writes at a run's end
(``crypto.subtle`` exists only in secure contexts: a plain-http server would show no
mark). Every tab asks for itself, on open and after each change, so every tab, and a
reopened one, shows the same marks.
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_ydoc import YNotebook
from tornado import web

from .agent import proposals
from .document import ORIGIN, CellNotFound, find_cell, source_hash
from .document.reference import NotebookRef
from .errors import BadRequest, Conflict, NotFound
from .execution.outputs_config import OUTPUTS_PATH
from .execution.outputs_store import FileOutputStore, RunKey
from .execution.run_origin import RunEntry, outputs_digest
from .handlers import NAMESPACE, LoopHandler
from .notebook_view.snapshot import sources_with_outputs
from .rights import Ability, requires

RESTORE_TURN = "history"
"""The ``turn_id`` of a proposal made from the History view (no turn of the assistant's:
the cards say who proposed it in their summary)."""


def runs_payload(
    runs: list[RunEntry], notebook: YNotebook | None, store: FileOutputStore | None
) -> list[dict[str, Any]]:
    """Each run as ``GET history`` answers it, with where its outputs can be seen:
    ``outputs_shown`` (the cell shows this run's outputs now; ``None`` without
    ``notebook``) and ``outputs_url`` (the full-output store keeps its record: a cell's
    last run, when something was cut)."""
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


class StaleHandler(LoopHandler):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        path = self.get_query_argument("path", "")
        if not path:
            raise BadRequest("'path' is required: the notebook whose stale outputs to tell.")
        execution = self.settings["jupyter_loop_execution"]
        room_id, notebook = await execution.live_notebook(path)
        history = self.settings.get("jupyter_loop_history")
        if history is not None:  # a run that just ended is in (its record waits a batch)
            await asyncio.to_thread(history.settle)
        marks = await execution.stale_marks(room_id, sources_with_outputs(notebook))
        self.reply({"path": path, "marks": marks})


class RestoreSourceHandler(LoopHandler):
    @web.authenticated
    @requires(Ability.PROPOSE)
    async def post(self) -> None:
        body = self.body_object()
        values = [body.get(key) for key in ("path", "cell_id", "run_id")]
        if not all(isinstance(value, str) and value for value in values):
            raise BadRequest("'path', 'cell_id' and 'run_id' are required strings.")
        path, cell_id, run_id = (str(value) for value in values)
        execution = self.settings["jupyter_loop_execution"]
        runs = await execution.history(path, cell_id, 1000)
        run = next((r for r in runs if r.run_id == run_id), None)
        if run is None:
            raise NotFound(f"Cell '{cell_id}' has no run '{run_id}' in the history.")
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
        with notebook.ydoc.transaction(origin=ORIGIN):
            proposal = proposals.create(
                notebook,
                turn_id=RESTORE_TURN,
                kind="modify",
                cell_id=cell_id,
                new_source=run.source,
                summary=f"Restore the source of run {run_id} (History, {self.user_name()})",
            )
        self.reply(proposal, status=201)


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [
        (rf"/api/{NAMESPACE}/stale", StaleHandler),
        (rf"/api/{NAMESPACE}/history/restore", RestoreSourceHandler),
    ]
