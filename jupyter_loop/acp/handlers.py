"""``GET /api/jupyter-loop/agents``: the agents a person may pick in the panel.

The built-in assistant first (available when a model provider is configured), then each
ACP agent of :mod:`.catalog`: its name, label, whether it can start here and why not.
Never its command or environment. Seeing what is on offer needs what seeing the models
needs (``GET agent/models``). A turn with one is ``POST agent/turns`` with ``agent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tornado import web

from ..access.rights import Ability, requires
from ..assistant_services import AssistantHandler
from ..handlers import NAMESPACE, LoopHandler
from .catalog import BUILTIN, AgentListing

if TYPE_CHECKING:
    from .service import AcpService

SETTING = "jupyter_loop_acp"
"""The server's setting that holds the :class:`~.service.AcpService`."""


class AgentsHandler(AssistantHandler):
    @web.authenticated
    @requires(Ability.SEE_KERNELS)
    async def get(self) -> None:
        acp: AcpService = self.settings[SETTING]
        agent = self.assistant.agent
        configured = agent.settings.provider_kind() is not None
        builtin = AgentListing(
            BUILTIN,
            "builtin",
            "Assistant",
            configured,
            None if configured else agent.settings.unconfigured_hint(),
        )
        listed = [builtin, *acp.settings.catalog.listings()]
        self.reply({"agents": [listing.public() for listing in listed]})


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [(rf"/api/{NAMESPACE}/agents", AgentsHandler)]
