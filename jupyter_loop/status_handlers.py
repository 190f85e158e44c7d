"""``GET /api/jupyter-loop/status``: the runs and agent turns in flight on this server.

What ``jupyter loop status`` shows. Reading kernels' state needs ``read`` on ``kernels``.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from .handlers import NAMESPACE, LoopHandler


class StatusHandler(LoopHandler):
    auth_resource = "kernels"

    @web.authenticated
    @authorized(action="read")
    async def get(self) -> None:
        execution = self.settings["jupyter_loop_execution"]
        agent = self.settings["jupyter_loop_agent"]
        self.reply({"runs": execution.in_flight(), "turns": agent.in_flight()})


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [(rf"/api/{NAMESPACE}/status", StatusHandler)]
