"""One agent turn: a server-side task that talks to the model, calls tools and streams.

The task belongs to :class:`~.service.AgentService`, not to a connection: it goes on when
every tab closes, with the room pinned. At every step the prompt is assembled again
(:mod:`.prompt`): the same stable beginning, the turn's tool calls and results as native
messages, and a live view of the notebook last, within a fixed budget. The model's text is
streamed into the shared document in batches; tool calls run one after the other (a call
repeated with the same arguments is refused, then ends the turn: :mod:`.repeats`), and
running cells may need a person's approval (:mod:`.permission`). A provider error ends the
turn with a notice and state ``error``; a stop (from any tab) cancels the task, which then
writes what it had and ends ``stopped``. The notebook is never left half-edited: the
only edits are proposals, which the user applies.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..document import LiveDocuments
from ..errors import JupyterLoopError
from ..execution.kernel.introspect import describe as describe_variables
from ..providers import (
    ChatMessage,
    ImagesRefused,
    ModelProvider,
    ProviderError,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallsReady,
    Usage,
)
from ..providers.token_budgets import BudgetAccount
from ..secrets import SecretMasker
from .asking import ApprovalPath
from .context import RESULT_SHARE, ConversationMessage, ToolResult, ToolStep
from .journal import AgentJournal
from .permission import TurnPermission
from .plan import RunCells, TurnPlan
from .prompt import TurnPrompt
from .repeats import REPEATED, REPEATS_ENDING, REPEATS_REFUSED, RepeatGuard, not_run
from .shared_turn import LiveTurn, StreamedText
from .store import ConversationStore, now_iso
from .tools import ReadVariables, Toolbox, ToolboxSetup, ToolOutcome

ReadStale = Callable[[Any], Awaitable[dict[str, str]]]
"""Why each cell's outputs are stale, by cell id, for the notebook given (the run history)."""

VARIABLES_CHARS = 4_000
"""At most this much of the variables description is read for the context (which cuts it)."""


class Turn:
    """Runs one turn to its end (see the module docstring)."""

    def __init__(
        self,
        plan: TurnPlan,
        *,
        docs: LiveDocuments,
        live: LiveTurn,
        provider: ModelProvider,
        run_cells: RunCells | None,  # None: the user may not run cells
        read_variables: ReadVariables,
        approvals: ApprovalPath,
        store: ConversationStore,
        journal: AgentJournal,
        masker: SecretMasker | None,
        history: list[ConversationMessage],
        log: logging.Logger,
        read_stale: ReadStale | None = None,
        budget: BudgetAccount | None = None,
    ) -> None:
        self.plan = plan
        self.live = live
        self.stopped_by: str | None = None
        self._docs = docs
        self._provider = provider
        self._budget = budget  # today's token caps: asked before each model call
        self._run_cells = run_cells
        self._read_variables = read_variables
        self._read_stale = read_stale  # the run history's stale marks, for the map
        self._variables = ""  # described for the context; read at the start and after runs
        self._store = store
        self._journal = journal
        self._masker = masker
        self._log = log
        self._steps_done: list[ToolStep] = []
        self._touched: list[str] = []
        self._repeats = RepeatGuard()
        self._permission = TurnPermission(plan, approvals, live, self._record)
        self._prompt = TurnPrompt(plan, history, masker)
        self._usage = {"input_tokens": 0, "output_tokens": 0}
        self._images = False  # the model takes images (until it refuses them)

    # -- the turn --------------------------------------------------------------------

    async def run(self) -> None:
        """The whole turn; ends in ``done``, ``stopped`` or ``error``, never raises."""
        state, error = "done", None
        async with self._docs.pinned(self.plan.room_id):
            try:
                state, error = await self._steps()
            except asyncio.CancelledError:
                state = "stopped"
            except ProviderError as e:
                state, error = "error", e.message
                self._record("model_error", kind=e.kind, message=e.message)
            except JupyterLoopError as e:
                state, error = "error", e.message
            except Exception as e:  # a bug: end the turn visibly rather than hang it
                self._log.exception("jupyter-loop: agent turn %s failed", self.plan.turn_id)
                state, error = "error", f"The agent failed unexpectedly: {type(e).__name__}."
            finally:
                self._prompt.close()
            await self._finish(state, error)

    async def _steps(self) -> tuple[str, str | None]:
        plan = self.plan
        caps = await self._provider.capabilities(plan.model)
        if not caps.tools:
            raise ProviderError(
                f"The model '{plan.model}' does not support tools, which the assistant needs. "
                "Choose a model that supports tool calling.",
                kind="no_tools",
            )
        self._images = caps.images and plan.images is not None
        budget = plan.budget_tokens
        if caps.context_window:
            budget = min(budget, int(caps.context_window * 0.75))
        setup = ToolboxSetup(
            plan.room_id,
            plan.turn_id,
            approve=self._permission.ask,
            run=self._run_cells,
            read_variables=self._read_variables,
            record=self._record,
            result_chars=int(budget * 4 * RESULT_SHARE) - 300,
            masker=self._masker,
            withheld=plan.withheld,
            shown_as=f"Assistant for {plan.user}",
        )
        toolbox = Toolbox(self._docs, setup)
        await self._refresh_variables()
        for step in range(1, plan.max_steps + 1):
            messages = await self._messages(budget)
            calls, finish, said = await self._call_model(messages, toolbox, step)
            if not calls:
                if finish == "length":
                    await self._notice("The answer was cut off at the model's length limit.")
                return "done", None
            results = await self._step_tools(toolbox, calls)
            if results is None:
                name = calls[-1].name
                return "error", (
                    f"The assistant repeated the same call ({name}) three times in a row, so "
                    "the turn was ended. Ask again, perhaps saying more precisely what you need."
                )
            self._steps_done.append(ToolStep(said, calls, results))
        message = (
            f"The agent stopped after {plan.max_steps} steps without finishing "
            "(the limit is c.JupyterLoopApp.agent_max_steps)."
        )
        return "error", message

    async def _finish(self, state: str, error: str | None) -> None:
        plan = self.plan
        # Masked once, here: a provider's error may quote what it was sent; the turn's
        # record and its notice then say the same (the panel shows it once).
        error = self._mask(error) if error else error
        try:
            if state == "stopped":
                who = self.stopped_by or "someone"
                await self._notice(f"Stopped by {who}. Cells already started keep running.")
            elif error:
                await self._notice(error, "error")
            await self.live.set_approval(None)
            await self.live.update(state=state, ended_at=now_iso(), error=error)
        except Exception:  # the notebook went away: the durable record still gets written
            self._log.warning("jupyter-loop: could not show the end of turn %s", plan.turn_id)
            self.live.turn.update(state=state, ended_at=now_iso(), error=error)
        self._store.save_turn(plan.file_id, dict(self.live.turn))
        self._record("turn_end", state=state, error=error, usage=dict(self._usage))

    # -- the model -------------------------------------------------------------------

    async def _messages(self, budget: int) -> list[ChatMessage]:
        notebook = await self._docs.notebook(self.plan.room_id)
        stale = await self._read_stale(notebook) if self._read_stale is not None else {}
        return await self._prompt.messages(
            notebook,
            stale=stale,
            steps=self._steps_done,
            touched=self._touched,
            notes=self._permission.notes,
            variables=self._variables,
            budget=budget,
            images=self._images,
        )

    async def _call_model(
        self, messages: list[ChatMessage], toolbox: Toolbox, step: int
    ) -> tuple[tuple[ToolCall, ...], str, str]:
        """One model call: its tool calls, finish reason and the text it wrote."""
        plan = self.plan
        began = time.monotonic()
        streamed = StreamedText(self.live, plan.stream_interval)
        calls: tuple[ToolCall, ...] = ()
        usage: Usage | None = None
        finish = ""
        images = sum(len(message.images) for message in messages)
        if self._budget is not None:
            self._budget.check()  # a cap reached by this turn's earlier steps ends it here
        events = self._provider.stream(model=plan.model, messages=messages, tools=toolbox.specs)
        try:
            async for event in events:
                if isinstance(event, TextDelta):
                    streamed.add(event.text)
                elif isinstance(event, ToolCallsReady):
                    calls = event.calls
                elif isinstance(event, Usage):
                    usage = event
                elif isinstance(event, StreamEnd):
                    finish = event.finish_reason
                elif isinstance(event, ImagesRefused):
                    self._images, images = False, 0
                    self._record("images_refused", model=plan.model, message=event.message)
        finally:
            text = await self._end_stream(events, streamed)
            if usage is not None:
                self._usage["input_tokens"] += usage.input_tokens
                self._usage["output_tokens"] += usage.output_tokens
                if self._budget is not None:
                    self._budget.spend(usage.input_tokens + usage.output_tokens)
            self._record(
                "model_call",
                model=plan.model,
                step=step,
                input_tokens=usage.input_tokens if usage else None,
                output_tokens=usage.output_tokens if usage else None,
                duration_ms=round((time.monotonic() - began) * 1000),
                finish_reason=finish or None,
                tool_calls=[call.name for call in calls],
                images=images,
            )
            await self.live.update(steps=step, usage=dict(self._usage))
        return calls, finish, text

    async def _end_stream(self, events: Any, streamed: StreamedText) -> str:
        """Close the model's stream, write the step's last text and keep it all; returns it.

        A stop may come meanwhile (the stream ended, its last batch waits to be written): the
        text is written and kept all the same, so the tab and the stored conversation agree.
        """
        try:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            try:
                await streamed.close()
            finally:
                # Masked as it streamed (the tabs were shown the same text): later steps
                # cut it (kept as head and tail).
                text = streamed.text
                if text:
                    plan = self.plan
                    self._store.add_message(
                        plan.file_id, turn_id=plan.turn_id, role="assistant", text=text
                    )
        return text

    # -- tools -----------------------------------------------------------------------

    async def _step_tools(
        self, toolbox: Toolbox, calls: tuple[ToolCall, ...]
    ) -> tuple[ToolResult, ...] | None:
        """Run a step's calls in order; None when a repeated call ends the turn.

        Every call gets a result (the protocol wants each answered): a call repeated twice in
        a row is not run, and ends the step; the calls after it are answered as not run.
        """
        results: list[ToolResult] = []
        ended = False
        for call in calls:
            if ended:
                outcome = not_run(call, "Not run: the step ended at the repeated call before.")
            else:
                repeats = self._repeats.count(call)
                if repeats >= REPEATS_ENDING:
                    return None
                ended = repeats == REPEATS_REFUSED
                outcome = not_run(call, REPEATED) if ended else await toolbox.call(call)
                await self._tool(call, outcome)
            results.append(
                ToolResult(call.name, outcome.arguments, outcome.content, outcome.ok, call.id)
            )
        return tuple(results)

    async def _tool(self, call: ToolCall, outcome: ToolOutcome) -> None:
        plan = self.plan
        if call.name == "run_cells" and outcome.ok:
            await self._refresh_variables()
        for cell_id in reversed(outcome.cell_ids):
            if cell_id in self._touched:
                self._touched.remove(cell_id)
            self._touched.insert(0, cell_id)
        # Masked once for the tabs and the store alike (the name too: the model wrote it).
        name = self._mask(call.name)
        summary, detail = self._mask(outcome.summary), self._mask(outcome.detail)
        await self.live.add(
            "tool",
            name=name,
            summary=summary,
            detail=detail,
            ok=outcome.ok,
            cell_ids=list(outcome.cell_ids),
        )
        tool = {"name": name, "summary": summary, "detail": detail, "ok": outcome.ok}
        self._store.add_message(
            plan.file_id, turn_id=plan.turn_id, role="tool", text=summary, tool=tool
        )
        self._record(
            "tool_call",
            name=call.name,
            arguments=outcome.arguments,
            ok=outcome.ok,
            receipt=summary,
        )
        if outcome.notice:
            await self._notice(outcome.notice, "error")

    async def _refresh_variables(self) -> None:
        """Read the kernel's variables for the context; none when it has no kernel or is busy
        (or when the user may not read them: the prompt says so)."""
        if not self.plan.may_read_variables:
            return
        try:
            report = await self._read_variables()
        except JupyterLoopError as e:
            self._variables = ""
            self._record("variables_read", ok=False, message=e.message)
            return
        self._variables = describe_variables(report, VARIABLES_CHARS)
        self._record("variables_read", ok=True, count=report.total)

    # -- records ---------------------------------------------------------------------

    async def _notice(self, text: str, level: str = "info") -> None:
        plan = self.plan
        text = self._mask(text)
        await self.live.add("notice", text=text, level=level)
        self._store.add_message(
            plan.file_id, turn_id=plan.turn_id, role="notice", text=text, level=level
        )

    def _record(self, action: str, **details: Any) -> None:
        plan = self.plan
        self._journal.record(
            plan.file_id, plan.turn_id, action, f"agent for {plan.user}", **details
        )

    def _mask(self, text: str) -> str:
        return self._masker.mask(text) if self._masker is not None else text
