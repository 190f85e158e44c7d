"""REST handlers of the agent (``/api/jupyter-loop/agent/...``): parse, call, reply.

As in Jupyter's own handlers: reading a notebook's conversation or journal, starting a
turn (the model reads the cells) or a new conversation, needs ``read`` on ``contents``;
running cells (a turn's runs, which an approval lets happen) needs ``execute`` on
``kernels`` and ``write`` on ``contents``, as ``POST runs`` does; accepting, rejecting or
undoing proposals edits notebooks (``write`` on ``contents``). The route table is at the bottom.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tornado import web

from ..access.rights import Ability, requires
from ..access.token_handlers import owner_of
from ..assistant_services import AssistantHandler
from ..errors import BadRequest
from ..handlers import NAMESPACE, LoopHandler
from .payloads import ApprovalAnswer, PathRequest, TurnRequest, provider_choice

if TYPE_CHECKING:
    from .service import AgentService

_ID = r"([A-Za-z0-9_-]{1,64})"


class AgentHandler(AssistantHandler):
    @property
    def agent(self) -> AgentService:
        return self.assistant.agent

    def path_argument(self) -> str:
        path = self.get_query_argument("path", "")
        if not path:
            raise BadRequest("The query argument 'path' is required.")
        return path


class ModelsHandler(AgentHandler):
    @web.authenticated
    @requires(Ability.SEE_KERNELS)
    async def get(self) -> None:
        kind = provider_choice(self.get_query_argument("provider", ""))
        self.reply(await self.agent.models(kind))


class ConversationHandler(AgentHandler):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        self.reply(await self.agent.conversation(self.path_argument()))


class JournalHandler(AgentHandler):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        self.reply({"entries": await self.agent.journal_entries(self.path_argument())})


class ServerJournalHandler(AgentHandler):
    """The MCP calls that named no notebook (or one that is not there)."""

    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        self.reply({"entries": self.agent.outside.server_entries()})


class TurnsHandler(AgentHandler):
    @web.authenticated
    @requires(Ability.READ)
    async def post(self) -> None:
        request = TurnRequest.from_json(self.body_object())
        if request.agent is not None:  # an ACP agent's turn (jupyter_loop/acp)
            acp = self.settings["jupyter_loop_acp"]  # acp.handlers.SETTING
            turn_id = await acp.start_turn(self.agent, request, await self.grants(), owner_of(self))
        else:
            turn_id = await self.agent.start_turn(request, await self.grants())
        self.reply({"turn_id": turn_id}, status=202)


class NewConversationHandler(AgentHandler):
    """Start a new conversation on a notebook: the right to start a turn there is enough."""

    @web.authenticated
    @requires(Ability.READ)
    async def post(self) -> None:
        request = PathRequest.from_json(self.body_object())
        started = await self.agent.new_conversation(request.path, self.user_name())
        self.reply({"conversation": started})


class StopHandler(AgentHandler):
    @web.authenticated
    @requires(Ability.READ)
    async def post(self, turn_id: str) -> None:
        request = PathRequest.from_json(self.body_object())
        await self.agent.stop_turn(turn_id, request.path, self.user_name())
        self.reply({"stopped": True})


class ApprovalHandler(AgentHandler):
    @web.authenticated
    @requires(Ability.RUN)
    async def post(self, approval_id: str) -> None:
        answer = ApprovalAnswer.from_json(self.body_object())
        await self.agent.answer_approval(approval_id, answer, self.user_name())
        self.reply({"decision": answer.decision})


class AcceptHandler(AgentHandler):
    @web.authenticated
    @requires(Ability.PROPOSE)
    async def post(self, proposal_id: str) -> None:
        request = PathRequest.from_json(self.body_object())
        proposal = await self.agent.decisions.accept(proposal_id, request.path, self.user_name())
        self.reply({"status": "accepted", "new_cell_id": proposal.get("new_cell_id")})


class UndoHandler(AgentHandler):
    """Undo accepted outputs (``proposals.undo_outputs`` says why not with Ctrl-Z)."""

    @web.authenticated
    @requires(Ability.PROPOSE)
    async def post(self, proposal_id: str) -> None:
        request = PathRequest.from_json(self.body_object())
        await self.agent.decisions.undo(proposal_id, request.path, self.user_name())
        self.reply({"status": "undone"})


class ClaimHandler(AgentHandler):
    """A tab asks to apply a proposal itself (undoable there); one tab at a time."""

    @web.authenticated
    @requires(Ability.PROPOSE)
    async def post(self, proposal_id: str) -> None:
        request = PathRequest.from_json(self.body_object())
        self.reply(await self.agent.decisions.claim(proposal_id, request.path, self.user_name()))


class RejectHandler(AgentHandler):
    @web.authenticated
    @requires(Ability.PROPOSE)
    async def post(self, proposal_id: str) -> None:
        request = PathRequest.from_json(self.body_object())
        await self.agent.decisions.reject(proposal_id, request.path, self.user_name())
        self.reply({"status": "rejected"})


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    base = rf"/api/{NAMESPACE}/agent"
    return [
        (rf"{base}/models", ModelsHandler),
        (rf"{base}/conversation", ConversationHandler),
        (rf"{base}/journal", JournalHandler),
        (rf"{base}/server-journal", ServerJournalHandler),
        (rf"{base}/conversations", NewConversationHandler),
        (rf"{base}/turns", TurnsHandler),
        (rf"{base}/turns/{_ID}/stop", StopHandler),
        (rf"{base}/approvals/{_ID}", ApprovalHandler),
        (rf"{base}/proposals/{_ID}/accept", AcceptHandler),
        (rf"{base}/proposals/{_ID}/claim", ClaimHandler),
        (rf"{base}/proposals/{_ID}/reject", RejectHandler),
        (rf"{base}/proposals/{_ID}/undo", UndoHandler),
    ]
