"""What a tab's History view and stale marks ask of the run history.

``GET /api/jupyter-loop/stale?path=``: why each cell's outputs are stale (edited since, or
the kernel restarted since), the marks the assistant's map and MCP's ``read_notebook``
carry. ``POST /api/jupyter-loop/history/restore`` ``{path, cell_id, run_id, what}``:
propose the source a run ran (``what`` "source", the default) or the outputs it ended with
("outputs"), as the assistant proposes an edit (a card with accept and undo).
The work is in ``history/cells.py``; these handlers check the request and the rights.

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

from tornado import web

from ..access.rights import Ability, requires
from ..errors import BadRequest
from ..handlers import NAMESPACE, LoopHandler
from .cells import RestoreRequest, propose_run_outputs, propose_run_source, stale_marks


class StaleHandler(LoopHandler):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        path = self.get_query_argument("path", "")
        if not path:
            raise BadRequest("'path' is required: the notebook whose stale outputs to tell.")
        execution = self.settings["jupyter_loop_execution"]
        history = self.settings.get("jupyter_loop_history")
        self.reply({"path": path, "marks": await stale_marks(execution, history, path)})


class RestoreHandler(LoopHandler):
    # RESTORE, not PROPOSE: the reply holds the run's source and the cell's (the proposal
    # and what it replaces), so a user who may write but not read would read through it.
    @web.authenticated
    @requires(Ability.RESTORE)
    async def post(self) -> None:
        body = self.body_object()
        values = [body.get(key) for key in ("path", "cell_id", "run_id")]
        if not all(isinstance(value, str) and value for value in values):
            raise BadRequest("'path', 'cell_id' and 'run_id' are required strings.")
        what = body.get("what", "source")
        if what not in ("source", "outputs"):
            raise BadRequest("'what' is 'source' (the default) or 'outputs'.")
        path, cell_id, run_id = (str(value) for value in values)
        request = RestoreRequest(path, cell_id, run_id, self.user_name())
        execution = self.settings["jupyter_loop_execution"]
        if what == "source":
            proposal = await propose_run_source(execution, request)
        else:
            proposal = await propose_run_outputs(execution, request)
        self.reply(proposal, status=201)


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [
        (rf"/api/{NAMESPACE}/stale", StaleHandler),
        (rf"/api/{NAMESPACE}/history/restore", RestoreHandler),
    ]
