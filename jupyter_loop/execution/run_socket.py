"""The runs websocket: a tab's run requests, answered in order, without an HTTP request each.

Running a cell is the request a user makes over and over, and over REST each one paid
for an HTTP request of its own: parsing, authentication, the response (a plain
authenticated ``GET /api/status`` takes 0.7 ms on a 2-core machine, half of what a
trivial cell adds over raw ``jupyter_client``). A tab keeps this socket open instead, as
it keeps its kernel's: authorized once, when it opens, for what ``POST runs`` needs
(executing on kernels, writing contents), then one frame a request and one an answer.

A request is ``{"request_id": "...", "run": <the body of POST runs>}``; its answer is
``{"request_id": "...", "ticket": <what POST runs answers>}`` or ``{"request_id": ...,
"error": {"status": 400, "message": "...", "reason": "BadRequest"}}``. A bad frame is
answered with an error and the socket stays open. Frames are handled one after the
other (tornado reads the next once :meth:`RunsSocketHandler.on_message` returns), so
cells run in the order the tab asked for them. The service, and every rule of a run,
are those of ``POST runs``.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from ..access.identity import user_name_of
from ..access.rights import Ability, requires
from ..errors import JupyterLoopError
from ..handlers import NAMESPACE, parse_json_object
from .payloads import SocketRun
from .run_origin import TAB, RunOrigin
from .service import ExecutionService


class RunsSocketHandler(WebSocketMixin, WebSocketHandler, JupyterHandler):
    """Jupyter's websocket mixin, as the kernel's socket has it: its origin check (the
    server's ``allow_origin`` settings) and keep-alive pings (proxies close idle ones)."""

    @ws_authenticated  # a 403, not tornado's redirect to a login page
    @requires(Ability.RUN)  # outputs are written into the notebook
    async def get(self, *args: Any, **kwargs: Any) -> None:
        await super().get(*args, **kwargs)

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)
        self.set_nodelay(True)  # one small frame per answer: Nagle's algorithm held some back

    @property
    def execution(self) -> ExecutionService:
        return self.settings["jupyter_loop_execution"]

    async def on_message(self, message: str | bytes) -> None:
        request_id: str | None = None
        try:
            data = parse_json_object(message.encode() if isinstance(message, str) else message)
            request_id = SocketRun.request_id_of(data)
            request = SocketRun.from_json(data)
            user = user_name_of(self)
            ticket = await self.execution.run(request.run, user, RunOrigin(user, TAB))
        except JupyterLoopError as e:
            await self._answer(request_id, error=e)
            return
        except Exception:
            self.log.exception("jupyter-loop could not queue cells")
            failed = JupyterLoopError("The server failed to queue these cells.")
            await self._answer(request_id, error=failed)
            return
        await self._answer(request_id, ticket=ticket.to_json())

    async def _answer(
        self,
        request_id: str | None,
        *,
        ticket: dict[str, Any] | None = None,
        error: JupyterLoopError | None = None,
    ) -> None:
        answer: dict[str, Any] = {"request_id": request_id}
        if error is not None:
            answer["error"] = {"status": error.status, **error.to_json()}
        else:
            answer["ticket"] = ticket
        try:  # awaited: a write cut short by a closing tab fails here, not unheard
            await self.write_message(json.dumps(answer))
        except WebSocketClosedError:
            pass  # the tab went away: its cells are queued all the same


def route_table() -> list[tuple[str, type[RunsSocketHandler]]]:
    return [(rf"/api/{NAMESPACE}/runs/socket", RunsSocketHandler)]
