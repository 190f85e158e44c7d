"""The ACP agents' sessions on this server: started for a turn, kept for the next one,
ended with the server (or when their process dies).

A session is one notebook's conversation with one agent for one person (and one token
scope): the agent remembers it between turns, as it would in an editor. A new
conversation (``POST agent/conversations``) gets a new session at its first turn, and the
old one ends then; a session idle for ``acp_session_idle_timeout`` seconds ends (the
agent's next turn starts a new one, remembering nothing of the earlier turns). Its process is
the server's to end: every session is closed in :meth:`AcpService.stop`, awaited by the
extension's ``stop_extension``, and a session whose process died is closed at once.

Each session gets a scoped token (:mod:`jupyter_loop.access.tokens`) for jupyter-loop's
MCP endpoint, for its notebook only, at most its person's rights and the turn's mode
(``approval: never`` gives a ``propose`` token: the agent cannot run cells through our
tools), revoked when the session ends and expiring by itself after
:data:`TOKEN_SECONDS` (a server killed before it could revoke it). A session older than
that is replaced by a new one before its next turn.

The id of each session opened is kept on disk (:mod:`.kept`): after a server restart (or
an idle end) the conversation's next turn reopens it with ``session/load`` where the agent
can, and otherwise the conversation says plainly that the agent starts anew
(:func:`resume_notice`).

Turns are the agent service's (one per notebook, whichever agent: a second is a 409), so
stopping, the conversation and the runs in flight treat them as the assistant's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..access.rights import Ability, Grants, rights_text
from ..access.tokens import SCOPES, AccessTokens, TokenOwner
from ..agent.callers import Caller
from ..agent.payloads import policy_or_default
from ..agent.shared_turn import LiveTurn
from ..agent.store import new_id, now_iso
from ..document import LiveDocuments, NotebookRef
from ..errors import Forbidden, NotFound
from ..providers.token_budgets import BudgetAccount
from ..records import TokenUsage, TurnRecord, UserEntry
from .catalog import AgentCatalog, AgentCommand
from .kept import KeptSession, KeptSessions
from .left_running import end_left_running

if TYPE_CHECKING:
    from ..agent.payloads import TurnRequest
    from ..agent.service import AgentService
    from .session import AcpSession
    from .turn import AcpTurn

TOKEN_SECONDS = 12 * 3600
SessionKey = tuple[str, str, str, str, str]
"""(room id, agent name, principal, token scope, conversation id)."""


@dataclass(frozen=True)
class AcpSettings:
    catalog: AgentCatalog
    tokens: AccessTokens
    mcp_url: Callable[[], str | None]
    """jupyter-loop's MCP endpoint as the agent's process reaches it (None: it cannot)."""
    root_dir: Path
    contents: Any
    turn_timeout: float
    idle_timeout: float = 1800.0
    start_timeout: float = 60.0
    kept: KeptSessions | None = None
    """Where the sessions' ids are kept for the next server process (None: nowhere)."""


def scope_for(grants: Grants, policy: str) -> str:
    """The widest token scope within the user's rights, and within the turn's mode."""
    if policy != "never" and grants.allows(Ability.RUN):
        return "run"
    if grants.allows(Ability.PROPOSE):
        return "propose"
    return "read"


class AcpService:
    """ACP sessions and their processes (see the module docstring)."""

    def __init__(self, docs: LiveDocuments, settings: AcpSettings, log: logging.Logger) -> None:
        self._docs = docs
        self.settings = settings
        self._log = log
        self._sessions: dict[SessionKey, tuple[AcpSession, float]] = {}
        self._starting: dict[SessionKey, asyncio.Lock] = {}
        self._stopping = False
        self._reaper: asyncio.Task[None] | None = None
        self._left: asyncio.Future[int] | None = None
        self._closing: set[asyncio.Future[None]] = set()
        self._server = uuid.uuid4().hex
        """This server process's id in the kept sessions (another's: it restarted since)."""

    def start(self) -> None:
        """Start ending idle sessions (their processes hold memory while nobody asks), and
        end the processes a killed server's sessions left running (:mod:`.left_running`)."""
        if self._reaper is None:
            self._reaper = asyncio.ensure_future(self._end_idle())
            self._left = asyncio.ensure_future(asyncio.to_thread(end_left_running, self._log))

    async def _end_idle(self) -> None:
        idle = self.settings.idle_timeout
        while True:
            await asyncio.sleep(max(0.1, min(60.0, idle / 4)))
            now = time.monotonic()
            for session, _ in list(self._sessions.values()):
                if not session.busy and now - session.last_used > idle:
                    await self._end(session)

    def processes(self) -> list[int]:
        """The process ids of the live sessions (for the tests, and ``status``)."""
        return [s.process.pid for s, _ in self._sessions.values() if s.process is not None]

    async def start_turn(
        self, agents: AgentService, request: TurnRequest, grants: Grants, owner: TokenOwner
    ) -> str:
        """Start a turn of ``request.agent`` on the notebook; its id. 409 if one runs there."""
        assert request.agent is not None
        if not grants.allows(Ability.RUN):
            # The agent's process runs on the server as the server's user, whatever our
            # tools let it do: starting one is running code, as a kernel is.
            raise Forbidden(f"Starting an agent on the server needs {rights_text(Ability.RUN)}.")
        command = self.settings.catalog.command(request.agent)
        # The day's token caps, as for the assistant's turns: 403 before any agent starts.
        budget = agents.budgets.account(grants.principal, request.path)
        budget.check()
        # The ACP SDK (and pydantic: about a second and a half on a busy machine) is
        # imported by the first turn, in a worker thread, as the assistant's services are.
        await asyncio.to_thread(_import_sdk_parts)
        room_id = await self._docs.room_id(request.path)
        policy = policy_or_default(request.approval, agents.settings.approval_policy)

        async def prepare() -> AcpTurn:
            return await self._prepare(
                agents, request, grants, owner, command, room_id, policy, budget
            )

        return await agents.launch(room_id, prepare)

    async def _prepare(
        self,
        agents: AgentService,
        request: TurnRequest,
        grants: Grants,
        owner: TokenOwner,
        command: AgentCommand,
        room_id: str,
        policy: str,
        budget: BudgetAccount,
    ) -> AcpTurn:
        from .turn import AcpPlan, AcpTurn  # the ACP SDK: imported by the first turn only

        masker = agents.settings.make_masker()
        file_id = NotebookRef.of_room(room_id).file_id
        message = masker.mask(request.message) if masker is not None else request.message
        plan = AcpPlan(
            turn_id=new_id("t"),
            room_id=room_id,
            file_id=file_id,
            user=grants.user,
            message=message,
            agent=command.name,
            label=command.label,
            policy=policy,
            timeout=self.settings.turn_timeout,
            stream_interval=agents.settings.stream_interval,
        )
        record = TurnRecord(
            id=plan.turn_id,
            state="running",
            model=command.label,
            provider=f"acp:{command.name}",
            started_by=grants.user,
            started_at=now_iso(),
            usage=TokenUsage(0, 0),
            approval=policy,
        )
        live = LiveTurn(self._docs, room_id, record, masker)
        await live.begin(UserEntry(id=new_id("e"), kind="user", text=message, by=grants.user))
        agents.store.save_turn(file_id, record.to_y())
        agents.store.add_message(
            file_id, turn_id=plan.turn_id, role="user", text=message, by=grants.user
        )
        agents.journal.record(
            file_id, plan.turn_id, "user_message", grants.user, text=message, agent=command.name
        )
        conversation = (agents.store.conversation(file_id) or {}).get("id", "")
        scope = scope_for(grants, policy)
        key: SessionKey = (room_id, command.name, grants.principal, scope, str(conversation))

        async def session_for() -> tuple[AcpSession, bool]:
            return await self._session(key, agents, request.path, grants, owner, command)

        return AcpTurn(
            plan,
            docs=self._docs,
            live=live,
            session_for=session_for,
            end_session=self._end,
            approvals=agents.approvals,
            store=agents.store,
            journal=agents.journal,
            log=self._log,
            masker=masker,
            budget=budget,
        )

    async def _session(
        self,
        key: SessionKey,
        agents: AgentService,
        path: str,
        grants: Grants,
        owner: TokenOwner,
        command: AgentCommand,
    ) -> tuple[AcpSession, bool]:
        """The live session for ``key``, or a new one (one start at a time per key)."""
        lock = self._starting.setdefault(key, asyncio.Lock())
        async with lock:
            found = self._sessions.get(key)
            if found is not None:
                session, started = found
                fresh = time.time() - started < TOKEN_SECONDS - self.settings.turn_timeout
                if session.alive and fresh:
                    return session, False
                await self._end(session)
            if self._stopping:
                from .session import AgentGone

                raise AgentGone("was not started: the server is stopping.")
            # One session per notebook, agent and person: the one of an earlier
            # conversation (or another mode) ends, its process with it, as the agent must
            # remember nothing of a conversation the person put away.
            for other, (older, _) in list(self._sessions.items()):
                if other[:3] == key[:3]:
                    await self._end(older)
            file_id = NotebookRef.of_room(key[0]).file_id
            kept = self.settings.kept
            earlier = kept.find(file_id, command.name, grants.principal) if kept else None
            if earlier is not None and earlier.conversation != key[4]:
                earlier = None  # a conversation put away: nothing of it is remembered
            session = self._new_session(key, agents, path, grants, owner, command)
            try:
                await session.start(earlier.session_id if earlier else None)
            except BaseException:
                await session.close()
                raise
            if earlier is not None:
                restarted = earlier.server != self._server
                session.notice = resume_notice(session.resumed, command.label, restarted)
            if kept is not None:
                made = KeptSession(
                    file_id, command.name, grants.principal, session.session_id, key[4],
                    self._server,
                )  # fmt: skip
                await asyncio.to_thread(kept.keep, made)
            self._sessions[key] = (session, time.time())
            return session, True

    def _new_session(
        self,
        key: SessionKey,
        agents: AgentService,
        path: str,
        grants: Grants,
        owner: TokenOwner,
        command: AgentCommand,
    ) -> AcpSession:
        from .client import NotebookClient, SessionScope, terminal_refusal
        from .session import AcpSession

        settings = self.settings
        scope = key[3]
        made, secret = settings.tokens.create(
            owner, scope, path, TOKEN_SECONDS, agent=command.label
        )

        def revoke() -> None:
            with contextlib.suppress(NotFound):
                settings.tokens.revoke(owner, made.id)

        caller = Caller(grants.user, command.label, principal=grants.principal, agent=command.label)
        narrowed = Grants(grants.user, grants.principal, grants.granted & SCOPES[scope], path)
        client = NotebookClient(
            SessionScope(
                path=path,
                root_dir=settings.root_dir,
                grants=narrowed,
                caller=caller,
                docs=self._docs,
                outside=agents.outside,
                contents=settings.contents,
                masker=agents.settings.make_masker(),
                terminal_refusal=terminal_refusal(grants, scope),  # the person's own rights
            )
        )
        url = settings.mcp_url()
        return AcpSession(
            command,
            client,
            str(settings.root_dir),
            (url, secret) if url else None,
            on_close=revoke,
            start_timeout=settings.start_timeout,
        )

    async def _end(self, session: AcpSession) -> None:
        """End ``session``: out of the list at once, its close run to the end even when
        the caller is cancelled (the idle reaper, as the server stops: a close cut short
        left an agent that ignores its closed input running), and waited for by
        :meth:`stop`."""
        for key, (known, _) in list(self._sessions.items()):
            if known is session:
                del self._sessions[key]
        closing = asyncio.ensure_future(session.close())
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)
        await asyncio.shield(closing)

    async def stop(self) -> None:
        """End every session and its process (the turns were stopped before)."""
        self._stopping = True
        if self._reaper is not None:
            self._reaper.cancel()
            await asyncio.wait([self._reaper])
        sessions = [session for session, _ in self._sessions.values()]
        self._sessions.clear()
        closing = [*self._closing, *(s.close() for s in sessions)]
        await asyncio.gather(*closing, return_exceptions=True)


def resume_notice(resumed: str | None, label: str, restarted: bool) -> str | None:
    """What the conversation says when a turn needed the session of its earlier turns."""
    since = "The server restarted" if restarted else "Its earlier session had ended"
    if resumed == "loaded":
        return f"{since}: {label} loaded its earlier session and goes on with it."
    forgets = "it does not remember the earlier turns of this conversation."
    if resumed and resumed.startswith("refused: "):
        why = resumed.removeprefix("refused: ")[:200]
        return (
            f"{since}: {label} could not load its earlier session ({why}) and started a "
            f"new session: {forgets}"
        )
    return f"{since}: {label} started a new session: {forgets}"


def _import_sdk_parts() -> None:
    from . import client, session, turn  # noqa: F401
