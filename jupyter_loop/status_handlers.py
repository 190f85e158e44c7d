"""``GET /api/jupyter-loop/status``: the runs and agent turns in flight on this server.

What ``jupyter loop status`` shows. Reading kernels' state needs ``read`` on ``kernels``.
"""

from __future__ import annotations

from tornado import web

from .handlers import NAMESPACE, LoopHandler
from .rights import Ability, requires


class StatusHandler(LoopHandler):
    @web.authenticated
    @requires(Ability.SEE_KERNELS)
    async def get(self) -> None:
        execution = self.settings["jupyter_loop_execution"]
        agent = self.settings["jupyter_loop_agent"]
        await execution.recovered()
        self.reply({"runs": execution.in_flight(), "turns": agent.in_flight()})


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [(rf"/api/{NAMESPACE}/status", StatusHandler)]
