"""``GET /api/jupyter-loop/status``: the runs and agent turns in flight on this server;
``GET /api/jupyter-loop/history``: the runs a notebook's cells had (the run history).

What ``jupyter loop status`` and ``jupyter loop history`` show. Reading kernels' state
needs ``read`` on ``kernels``; the history is the notebook's, so ``read`` on ``contents``.
"""

from __future__ import annotations

from tornado import web

from .access.identity import principal_of
from .access.rights import Ability, requires
from .assistant_services import AssistantHandler
from .document import collaboration
from .errors import BadRequest
from .handlers import NAMESPACE, LoopHandler
from .history.cells import runs_payload
from .history.handlers import route_table as cell_history_routes
from .ystore import writes_waiting


class StatusHandler(AssistantHandler):
    @web.authenticated
    @requires(Ability.SEE_KERNELS)
    async def get(self) -> None:
        execution = self.settings["jupyter_loop_execution"]
        agent = self.assistant.agent
        await execution.recovered()
        tokens = agent.budgets.usage(principal_of(self))  # the caller's count today
        approvals = await agent.waiting_approvals()  # with the id ``jupyter loop approve`` takes
        damaged = self.settings.get("jupyter_loop_damaged")
        moved = [item.to_json() for item in damaged.listed()] if damaged is not None else []
        monitor = self.settings.get("jupyter_loop_loop_monitor")
        extension = collaboration.extension(self.settings)
        rooms = collaboration.rooms(extension).values() if extension is not None else ()
        self.reply(
            {
                "runs": execution.in_flight(),
                "turns": agent.in_flight(),
                "approvals": approvals,
                "tokens": tokens,
                # State files found damaged and moved aside at this start (``state_files``).
                "damaged": moved,
                # The server's own health: how late its event loop runs (loop_health.py).
                "loop": monitor.lag().as_json() if monitor is not None else None,
                "store_writes_waiting": writes_waiting(rooms),
            }
        )


HISTORY_LIMIT = 1000
"""Runs one history request returns at most (``limit=``, default 100)."""


class HistoryHandler(LoopHandler):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        path = self.get_query_argument("path", "")
        if not path:
            raise BadRequest("'path' is required: the notebook whose runs to list.")
        cell_id = self.get_query_argument("cell_id", None) or None
        try:
            limit = int(self.get_query_argument("limit", "100"))
        except ValueError:
            raise BadRequest("'limit' must be a whole number.") from None
        if not 1 <= limit <= HISTORY_LIMIT:
            raise BadRequest(f"'limit' must be between 1 and {HISTORY_LIMIT}.")
        execution = self.settings["jupyter_loop_execution"]
        runs = await execution.history(path, cell_id, limit)
        # One cell's runs (the History view) are compared with the cell's outputs now; a
        # whole notebook's are not (a room loaded and every cell looked up, for a listing).
        notebook = (await execution.live_notebook(path))[1] if cell_id and runs else None
        payload = runs_payload(runs, notebook, self.settings.get("jupyter_loop_outputs"))
        self.reply({"path": path, "cell_id": cell_id, "runs": payload})


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [
        (rf"/api/{NAMESPACE}/status", StatusHandler),
        (rf"/api/{NAMESPACE}/history", HistoryHandler),
        *cell_history_routes(),
    ]
