"""One turn of an ACP agent: the prompt sent, what the agent says streamed into the
notebook's conversation, its permission requests put to people, and a plain end.

Like the built-in assistant's turn (:mod:`jupyter_loop.agent.turn`), it is a task the
agent service owns, not a connection: it goes on with every tab closed, the room pinned.
A stop (any tab, the terminal) sends ``session/cancel`` and waits a little for the agent
to end the prompt ``cancelled``, keeping what it said; an agent that ignores the cancel,
takes longer than the turn's time budget, or whose process dies, has its session ended
and the turn says so in one plain line (never a turn left running).

The tokens the agent says a turn used (the prompt response's ``usage``, an unstable part
of ACP that some agents send) are the turn's usage, and count against the day's token
caps (:mod:`jupyter_loop.providers.token_budgets`), as the assistant's model calls do; a
person over a cap cannot start a turn (403, :meth:`.service.AcpService.start_turn`).
``usage_update`` notifications are not counted: they say how full the agent's context
window is, not what was spent. An agent that reports nothing spends nothing here (its
model server's own limits still apply).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from ..agent.asking import ApprovalPath, Asking
from ..agent.journal import AgentJournal
from ..agent.permission import TurnSlot, turn_allowance
from ..agent.shared_turn import LiveTurn
from ..agent.store import ConversationStore, now_iso
from ..document import LiveDocuments
from ..errors import JupyterLoopError
from ..providers.token_budgets import BudgetAccount
from ..secrets import SecretMasker
from .session import AcpSession, AgentGone, AgentRefused
from .updates import TurnUpdates, commands_text

CANCEL_GRACE = 5.0
"""Seconds an agent has to end its prompt after ``session/cancel`` before it is stopped."""

SessionFor = Callable[[], Awaitable[tuple[AcpSession, bool]]]
"""The notebook's session with the agent (started if need be) and whether it is new."""


@dataclass(frozen=True)
class AcpPlan:
    """What a turn is: whose, on which notebook, with which agent, within what limits."""

    turn_id: str
    room_id: str
    file_id: str
    user: str
    message: str
    agent: str
    label: str
    policy: str
    timeout: float
    stream_interval: float


class AcpTurn:
    """Runs one turn of an ACP agent to its end (see the module docstring)."""

    def __init__(
        self,
        plan: AcpPlan,
        *,
        docs: LiveDocuments,
        live: LiveTurn,
        session_for: SessionFor,
        end_session: Callable[[AcpSession], Awaitable[None]],
        approvals: ApprovalPath,
        store: ConversationStore,
        journal: AgentJournal,
        log: logging.Logger,
        masker: SecretMasker | None = None,
        budget: BudgetAccount | None = None,
    ) -> None:
        self.plan = plan
        self._masker = masker
        self._budget = budget
        self._usage = {"input_tokens": 0, "output_tokens": 0}
        self.live = live
        self.stopped_by: str | None = None
        self._docs = docs
        self._session_for = session_for
        self._end_session = end_session
        self._approvals = approvals
        self._store = store
        self._journal = journal
        self._log = log
        self._slot = TurnSlot(live)
        self._updates = TurnUpdates(live, plan.stream_interval, self._store_message)

    def _store_message(self, role: str, text: str, **extra: Any) -> None:
        self._store.add_message(
            self.plan.file_id, turn_id=self.plan.turn_id, role=role, text=text, **extra
        )

    def record(self, action: str, **details: Any) -> None:
        """Journal one action of this turn, named as its agent for its person."""
        self._record(action, **details)

    def _record(self, action: str, **details: Any) -> None:
        plan = self.plan
        self._journal.record(
            plan.file_id, plan.turn_id, action, f"{plan.label} for {plan.user}", **details
        )

    # -- what the agent asks during the turn (through the session's client) -----------

    async def apply(self, update: Any) -> None:
        await self._updates.apply(update)

    async def permission(self, tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
        """The agent's permission request as the notebook's approval card: the same path,
        policy and "for this turn" allowance as the assistant's runs of cells."""
        # "Once" where the agent offers it: an agent's "always" is remembered by the agent
        # (in its own settings, beyond this turn); ours is the allowance of the turn.
        allow = _option(options, "allow_once", "allow_always")
        reject = _option(options, "reject_once", "reject_always")
        title = str(getattr(tool_call, "title", None) or "an action")
        words = [f"{self.plan.label} asks to: {title}"]
        words += [f"Options: {', '.join(o.name for o in options)}"] if options else []
        plan = self.plan
        answer = await self._approvals.ask(
            Asking(
                room_id=plan.room_id,
                turn_id=plan.turn_id,
                cell_ids=(),
                sources={str(tool_call.tool_call_id): "\n".join(words)},
                policy=plan.policy,
                slot=self._slot,
                record=self._record,
                allowance=turn_allowance(plan.turn_id),
                # Who asks, as the journal says it: without it a tab's card said "The
                # assistant wants to run 0 cells" and showed none of the agent's words.
                requested_by=f"{plan.label} for {plan.user}",
            )
        )
        chosen = allow if answer.allowed else reject
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id)
        )

    # -- the turn ----------------------------------------------------------------------

    async def run(self) -> None:
        """The whole turn; ends ``done``, ``stopped`` or ``error``, never raises."""
        state, error = "done", None
        label = self.plan.label
        async with self._docs.pinned(self.plan.room_id):
            session: AcpSession | None = None
            try:
                session, new = await self._session_for()
                if new and not session.reaches_tools:
                    await self._updates.notice(
                        f"{label} cannot reach jupyter-loop's tools (it takes no MCP server "
                        "over HTTP): it reads notebooks only through the file requests."
                    )
                if new and session.notice:
                    notice = session.notice
                    masked = self._masker.mask(notice) if self._masker is not None else notice
                    await self._updates.notice(masked)  # an agent's reason may quote a secret
                if session.client.commands:
                    commands, session.client.commands = session.client.commands, None
                    await self._updates.notice(commands_text(commands))
                session.client.turn = self
                state, error = await self._prompt(session)
            except asyncio.CancelledError:
                state = "stopped"
            except AgentGone as e:
                state, error = "error", f"{label} {e}"
                if session is not None:
                    await self._end_session(session)
            except AgentRefused as e:  # the agent goes on: the next turn may do better
                state, error = "error", f"{label} {e}"
            except JupyterLoopError as e:
                state, error = "error", e.message
            except Exception as e:  # a bug: end the turn visibly rather than hang it
                self._log.exception("jupyter-loop: ACP turn %s failed", self.plan.turn_id)
                state, error = "error", f"The turn failed unexpectedly: {type(e).__name__}."
            finally:
                if session is not None:
                    session.client.turn = None
                    session.last_used = time.monotonic()
            await self._finish(state, error)

    async def _prompt(self, session: AcpSession) -> tuple[str, str | None]:
        prompt = asyncio.ensure_future(session.prompt(self.plan.message))
        try:
            reply = await asyncio.wait_for(asyncio.shield(prompt), self.plan.timeout)
        except asyncio.TimeoutError:
            await self._wind_down(session, prompt)
            return "error", (
                f"{self.plan.label} took longer than {self.plan.timeout:g} s; the turn was "
                "cancelled (c.JupyterLoopApp.acp_turn_timeout)."
            )
        except asyncio.CancelledError:
            await self._wind_down(session, prompt)
            raise
        await self._count(reply)
        reason = reply.stop_reason
        if reason == "cancelled":
            return "stopped", None
        if reason == "refusal":
            return "error", f"{self.plan.label} refused to go on."
        if reason in ("max_tokens", "max_turn_requests"):
            await self._updates.notice(f"{self.plan.label} stopped at its own limit ({reason}).")
        return "done", None

    async def _wind_down(self, session: AcpSession, prompt: asyncio.Future[Any]) -> None:
        """``session/cancel``, then a little time for the agent to end the prompt; an agent
        that does not is stopped with its session."""
        await session.cancel()
        try:
            reply = await asyncio.wait_for(asyncio.shield(prompt), CANCEL_GRACE)
        except Exception:  # it did not end in time, or it died meanwhile
            prompt.cancel()
            await self._end_session(session)
        else:
            await self._count(reply)  # a cancelled turn spent its tokens all the same

    async def _count(self, reply: Any) -> None:
        """The tokens the agent says the turn used: the turn's usage, and the day's count."""
        usage = getattr(reply, "usage", None)
        if usage is None:
            return
        used, made = int(usage.input_tokens or 0), int(usage.output_tokens or 0)
        self._usage["input_tokens"] += used
        self._usage["output_tokens"] += made
        if self._budget is not None:
            self._budget.spend(used + made)
        self._record("model_call", model=self.plan.label, input_tokens=used, output_tokens=made)
        await self.live.update(usage=dict(self._usage))

    async def _finish(self, state: str, error: str | None) -> None:
        plan = self.plan
        if error and self._masker is not None:  # an agent's last words may quote a secret
            error = self._masker.mask(error)
        try:
            await self._updates.close()
            if state == "stopped":
                await self._updates.notice(f"Stopped by {self.stopped_by or 'someone'}.")
            elif error:
                await self._updates.notice(error, "error")
            await self.live.set_approval(None)
            await self.live.update(state=state, ended_at=now_iso(), error=error)
        except Exception:  # the notebook went away: the durable record still gets written
            self._log.warning("jupyter-loop: could not show the end of turn %s", plan.turn_id)
            self.live.turn.update(state=state, ended_at=now_iso(), error=error)
        self._store.save_turn(plan.file_id, dict(self.live.turn))
        self._record(
            "turn_end", state=state, error=error, agent=plan.agent, usage=dict(self._usage)
        )


def _option(options: list[Any], *kinds: str) -> Any:
    """The first option of the first of ``kinds`` the agent offers (None: none)."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option
    return None
