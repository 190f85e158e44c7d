"""The agent service: owns the turns, the approvals, the conversations and the journal.

Its model providers (made on first use, the model a turn uses) are
:class:`.model_providers.ModelProviders`.

One turn per notebook at a time (a second gets a 409). Turns are tasks owned here, not by
a connection; :meth:`AgentService.stop` ends them cleanly when the server stops. The
answers to proposals go through :attr:`AgentService.decisions` (:mod:`.decisions`). Knows
nothing of HTTP: the handlers parse, call one method and reply.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from ..access.rights import Ability, Grants
from ..document import LiveDocuments, NotebookRef
from ..errors import Conflict, NotFound
from ..execution.kernel.introspect import VariablesReport
from ..execution.payloads import RunRequest
from ..execution.run import RunOutcome
from ..execution.run_origin import ASSISTANT, RunOrigin
from ..execution.service import ExecutionService
from ..notebook_view.snapshot import sources_with_outputs
from ..providers import ModelProvider
from ..providers.token_budgets import BudgetAccount, TokenBudgets
from ..records import TokenUsage, TurnRecord, UserEntry
from .approvals import ApprovalDesk
from .asking import ApprovalPath
from .context import ConversationMessage
from .decisions import ProposalDecisions
from .journal import AgentJournal
from .model_providers import ModelProviders
from .outside import OutsideAgents
from .payloads import ApprovalAnswer, TurnRequest, policy_or_default
from .permission import turn_allowance
from .plan import WITHHELD, TurnPlan
from .settings import AgentSettings
from .shared_turn import LiveTurn, current_turn, show_new_conversation
from .store import ConversationStore, new_id, now_iso
from .turn import Turn
from .waiting_approvals import waiting_approvals

HISTORY_MESSAGES = 60
ACTIVE = ("running", "waiting_approval")
RESTART_NOTE = "The turn was cut off by a server restart."


class _Planned(Protocol):
    @property
    def turn_id(self) -> str: ...


class RunningTurn(Protocol):
    """A turn the service runs: the assistant's (:class:`.turn.Turn`) or an ACP agent's."""

    @property
    def plan(self) -> _Planned: ...

    live: LiveTurn
    stopped_by: str | None

    async def run(self) -> None: ...


class AgentService:
    """Agent turns on notebooks, and everything around them."""

    def __init__(
        self,
        docs: LiveDocuments,
        execution: ExecutionService,
        settings: AgentSettings,
        log: logging.Logger,
    ) -> None:
        self._docs = docs
        self._execution = execution
        self.settings = settings
        self._log = log
        self._masker = settings.make_masker()
        root = Path(settings.data_dir)
        self.store = ConversationStore(root / "conversations")
        self.budgets = TokenBudgets(
            root / "token_budgets.json" if settings.data_dir else None,
            settings.budget_limits,
            log=log,
        )
        self.journal = AgentJournal(root / "journal", self._masker)
        self._desk = ApprovalDesk()
        self._approvals = ApprovalPath(self._desk, self._masker)
        self._turns: dict[str, RunningTurn | None] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.providers = ModelProviders(settings)
        self.decisions = ProposalDecisions(docs, self.journal)
        self.outside = OutsideAgents(
            docs,
            execution,
            self._desk,
            self._approvals,
            self.journal,
            self._masker,
            settings.approval_policy,
            log,
            server_journal=AgentJournal(root / "server-journal", self._masker),
        )

    def start(self) -> None:
        self.providers.start()

    async def stop(self) -> None:
        self.budgets.close()
        self.decisions.stop()
        await self.outside.stop()
        for room_id, task in list(self._tasks.items()):
            turn = self._turns.get(room_id)
            if turn is not None:
                turn.stopped_by = "the server shutting down"
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks.values()), timeout=5)
        await self.providers.close()

    async def models(self, kind: str | None = None) -> dict[str, Any]:
        """``GET models``: the provider, whether it is usable, its models (never a key)."""
        return await self.providers.models(kind)

    # -- turns -----------------------------------------------------------------------

    async def start_turn(self, request: TurnRequest, grants: Grants) -> str:
        """Start a turn on the notebook; returns its id. 409 if one is running there.

        ``grants``: what the user may do (:mod:`jupyter_loop.access.rights`). Without the right to
        run, the turn's ``run_cells`` calls fail before asking for approval (the model is
        told, nothing runs); without the right to edit, no ``propose_*`` tool is offered;
        without the kernel rights, no variables are read. The prompt says which.
        """
        provider = self.providers.require(request.provider)
        budget = self.budgets.account(grants.principal, request.path)
        budget.check()  # 403 before the turn: over today's cap
        room_id = await self._docs.room_id(request.path)
        return await self.launch(
            room_id, lambda: self._prepare(request, grants, room_id, provider, budget)
        )

    async def launch(self, room_id: str, prepare: Callable[[], Awaitable[RunningTurn]]) -> str:
        """Run the turn ``prepare`` makes as the notebook's one turn; returns its id. 409 if
        a turn (the assistant's or an ACP agent's) is running there."""
        if room_id in self._turns:
            raise Conflict("The agent is already working on this notebook; stop it or wait.")
        self._turns[room_id] = None  # reserved: no await between the check and this line
        try:
            turn = await prepare()
        except BaseException:
            del self._turns[room_id]
            raise
        self._turns[room_id] = turn
        task = asyncio.ensure_future(turn.run())
        self._tasks[room_id] = task
        task.add_done_callback(lambda _: self._ended(room_id, turn.plan.turn_id))
        return turn.plan.turn_id

    @property
    def approvals(self) -> ApprovalPath:
        """The one approval path (an ACP agent's permission requests go through it too)."""
        return self._approvals

    async def _prepare(
        self,
        request: TurnRequest,
        grants: Grants,
        room_id: str,
        provider: ModelProvider,
        budget: BudgetAccount,
    ) -> Turn:
        settings = self.settings
        user = grants.user
        file_id = NotebookRef.of_room(room_id).file_id
        model = await self.providers.model_for(request, provider)
        policy = policy_or_default(request.approval, settings.approval_policy)
        plan = TurnPlan(
            turn_id=new_id("t"),
            room_id=room_id,
            file_id=file_id,
            user=user,
            message=self._mask(request.message),  # masked whole before any excerpt of it
            model=model,
            focus_ids=request.focus_cell_ids,
            policy=policy,
            max_steps=min(settings.max_steps, request.max_steps or settings.max_steps),
            budget_tokens=settings.context_tokens,
            stream_interval=settings.stream_interval,
            active_cell_id=request.active_cell_id,
            images=settings.image_budget if settings.images != "off" else None,
            withheld=frozenset(a for a in WITHHELD if not grants.allows(a)),
        )
        history = [
            ConversationMessage(m["role"], str(m.get("text", "")), earlier=True)
            for m in self.store.messages(file_id)
            if m.get("role") in ("user", "assistant")
        ][-HISTORY_MESSAGES:]
        record = TurnRecord(
            id=plan.turn_id,
            state="running",
            model=model,
            provider=provider.name,
            started_by=user,
            started_at=now_iso(),
            usage=TokenUsage(0, 0),
            approval=policy,
        )
        live = LiveTurn(self._docs, room_id, record, self._masker)
        text = plan.message
        await live.begin(UserEntry(id=new_id("e"), kind="user", text=text, by=user))
        self.store.save_turn(file_id, record.to_y())
        self.store.add_message(file_id, turn_id=plan.turn_id, role="user", text=text, by=user)
        self.journal.record(file_id, plan.turn_id, "user_message", user, text=text, model=model)
        return Turn(
            plan,
            docs=self._docs,
            live=live,
            provider=provider,
            budget=budget,
            run_cells=self._runner(room_id, user, plan.turn_id)
            if grants.allows(Ability.RUN)
            else None,
            read_variables=self._variables_reader(room_id),
            approvals=self._approvals,
            store=self.store,
            journal=self.journal,
            masker=self._masker,
            history=history,
            log=self._log,
            read_stale=self._stale_reader(room_id),
        )

    def _runner(self, room_id: str, user: str, turn_id: str) -> Any:
        async def run(
            cell_ids: list[str], hashes: dict[str, str], approval: str
        ) -> dict[str, RunOutcome]:
            path = self._docs.path_of(room_id)
            if path is None:
                raise NotFound("The notebook is gone.")
            request = RunRequest(path=path, cell_ids=tuple(cell_ids), source_hashes=hashes)
            # A stopped turn stops waiting; the cells run on (the service's wait).
            origin = RunOrigin(user, ASSISTANT, turn=turn_id, approval=approval)
            return await self._execution.run_and_wait(request, f"agent for {user}", origin=origin)

        return run

    def _stale_reader(self, room_id: str) -> Any:
        async def read(notebook: Any) -> dict[str, str]:
            return await self._execution.stale_marks(room_id, sources_with_outputs(notebook))

        return read

    def _variables_reader(self, room_id: str) -> Any:
        async def read() -> VariablesReport:
            path = self._docs.path_of(room_id)
            if path is None:
                raise NotFound("The notebook is gone.")
            return await self._execution.variables(path)

        return read

    def _ended(self, room_id: str, turn_id: str) -> None:
        self._tasks.pop(room_id, None)
        self._turns.pop(room_id, None)
        self._desk.forget_turn(turn_id)
        self._approvals.forget(turn_allowance(turn_id))

    async def stop_turn(self, turn_id: str, path: str, user: str) -> None:
        """Stop a running turn (from any tab) and wait until it has wound down."""
        room_id = await self._docs.room_id(path)
        turn = self._turns.get(room_id)
        task = self._tasks.get(room_id)
        if turn is None or task is None or turn.plan.turn_id != turn_id:
            last = self.store.last_turn(NotebookRef.of_room(room_id).file_id)
            if last is not None and last.get("id") == turn_id:
                raise Conflict("This turn has already ended.")
            raise NotFound(f"No turn with id '{turn_id}' on this notebook.")
        turn.stopped_by = user
        self.journal.record(NotebookRef.of_room(room_id).file_id, turn_id, "stop", user)
        task.cancel()
        await asyncio.wait([task], timeout=10)

    async def answer_approval(self, approval_id: str, answer: ApprovalAnswer, user: str) -> None:
        room_id = await self._docs.room_id(answer.path)
        self._desk.answer(approval_id, room_id, answer, user)

    async def new_conversation(self, path: str, user: str) -> dict[str, Any]:
        """Start a new conversation on the notebook: turns from now on are sent none of the
        earlier messages, and every tab's panel empties. 409 while a turn runs there.

        The earlier messages stay in the store's file and their side of it in the journal
        (:class:`.store.ConversationStore` says why nothing is deleted).
        """
        room_id = await self._docs.room_id(path)
        if room_id in self._turns:
            raise Conflict(
                "The agent is working on this notebook: stop the turn or wait for it to end, "
                "then start a new conversation."
            )
        self._turns[room_id] = None  # reserved, as a turn does: no turn starts meanwhile
        try:
            file_id = NotebookRef.of_room(room_id).file_id
            before = len(self.store.messages(file_id))
            started = self.store.start_conversation(file_id, user)
            self.journal.record(
                file_id,
                None,
                "new_conversation",
                user,
                conversation_id=started["id"],
                messages_before=before,
            )
            await show_new_conversation(self._docs, room_id, started)
        finally:
            del self._turns[room_id]
        return started

    # -- history ---------------------------------------------------------------------

    async def conversation(self, path: str) -> dict[str, Any]:
        """The durable conversation of a notebook and its current or last turn."""
        room_id = await self._docs.room_id(path)
        file_id = NotebookRef.of_room(room_id).file_id
        turn = self._turns.get(room_id)
        record = dict(turn.live.turn) if turn is not None else self.store.last_turn(file_id)
        if turn is None and record is not None and TurnRecord.from_y(record).state in ACTIVE:
            record = await self._close_cut_off(room_id, file_id, record)
        turns = self.store.turns(file_id)
        if record is not None:
            turns = [t for t in turns if t.get("id") != record.get("id")] + [record]
        return {
            "file_id": file_id,
            "conversation": self.store.conversation(file_id),
            "messages": self.store.messages(file_id),
            "turn": record,
            "turns": turns,
        }

    async def _close_cut_off(
        self, room_id: str, file_id: str, record: dict[str, Any]
    ) -> dict[str, Any]:
        """A turn the store says is running but no task runs: a restart cut it off."""
        record = {**record, "state": "error", "error": RESTART_NOTE, "ended_at": now_iso()}
        self.store.save_turn(file_id, record)
        self.store.add_message(
            file_id, turn_id=str(record["id"]), role="notice", text=RESTART_NOTE, level="error"
        )
        notebook = await self._docs.notebook(room_id)
        shown = current_turn(notebook)
        if shown is not None and shown.id == record["id"]:
            live = LiveTurn(self._docs, room_id, TurnRecord.from_y(record), self._masker)
            await live.set_approval(None)
            await live.update()
        return record

    def in_flight(self) -> list[dict[str, Any]]:
        """The turns running (or waiting for an approval) on this server."""
        return [
            {"path": self._docs.path_of(room_id) or "", **turn.live.turn}
            for room_id, turn in self._turns.items()
            if turn is not None
        ]

    async def waiting_approvals(self) -> list[dict[str, Any]]:
        """The approvals waiting for a person (:mod:`.waiting_approvals`)."""
        return await waiting_approvals(self._docs, self._desk)

    async def journal_entries(self, path: str) -> list[dict[str, Any]]:
        room_id = await self._docs.room_id(path)
        return self.journal.entries(NotebookRef.of_room(room_id).file_id)

    def _mask(self, text: str) -> str:
        return self._masker.mask(text) if self._masker is not None else text
