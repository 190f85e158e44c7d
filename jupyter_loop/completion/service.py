"""The completion service: one model call per editor at a time, counted, never journalled.

A request starts a job (a task owned here) that reads the notebook's neighbouring cells,
builds the prompt and streams the model's answer into a queue the handler reads. A new
request from the same editor cancels the previous job (its person typed on), unless it
comes from accepting that job's suggestion; a handler whose client went away cancels its
own: cancelling closes the model's HTTP stream, so the model server stops generating.
With no provider configured a request quietly gets an empty answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ..agent.settings import AgentSettings
from ..document import LiveDocuments
from ..errors import JupyterLoopError
from ..notebook_view.envelope import new_nonce
from ..providers import ModelProvider, ProviderError, StreamEnd, TextDelta, Usage
from ..providers.token_budgets import BudgetAccount, TokenBudgets
from .context import CompletionPrompt, build_prompt, nearby_cells
from .models import FenceFilter, RepeatTrimmer, complete, says_no_fill_in_middle
from .payloads import CompletionRequest
from .variables import VariableRecord, VariableSource

VARIABLES_TIMEOUT = 0.3
"""Seconds a completion waits for the kernel's variables before going on without them."""


@dataclass(frozen=True)
class CompletionChunk:
    """One line of the streamed answer: text, or the end (with an error message if failed)."""

    text: str = ""
    done: bool = False
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        if not self.done:
            return {"text": self.text}
        return {"done": True, "error": self.error}


@dataclass
class CompletionUsage:
    """What completions cost since the server started (shown in the assistant's panel).

    Counted for the whole server, not per user: the model's key and budget are the
    server's (in a JupyterHub, the server is one user's anyway).

    Attributes:
        requests: Model calls made (failed and cancelled ones included).
        input_tokens: Prompt tokens, as the model reported them.
        output_tokens: Generated tokens, as the model reported them (a cancelled call
            reports none).
        failures: Calls that ended in an error.
        cancelled: Calls cut off because the user typed on.
        last_error: The last failure's message.
    """

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failures: int = 0
    cancelled: int = 0
    last_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class CompletionJob:
    """One request's model call, as the handler sees it."""

    editor_id: str
    sequence: int = 0  # the editor's number for the request (see CompletionRequest)
    before: str = ""  # the editor's text before the cursor
    shown: str = ""  # the suggestion sent so far
    queue: asyncio.Queue[CompletionChunk | None] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None
    budget: BudgetAccount | None = None  # whose daily token cap the call counts against

    async def chunks(self) -> AsyncIterator[CompletionChunk]:
        """The answer as it streams; ends when the job ends, however it ends."""
        while (chunk := await self.queue.get()) is not None:
            yield chunk

    def cancel(self) -> None:
        """Stop the model call (the client went away or typed on)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def accepted_by(self, request: CompletionRequest) -> bool:
        """Whether ``request`` is its editor asking again because its person accepted this
        job's suggestion: the text before its cursor is this job's followed by all of the
        suggestion. Such a job is left to end rather than cancelled as typed over: the
        model sends the call's token count after the text, and a call cut there was never
        counted in the usage or the day's budget.

        >>> job = CompletionJob("tab:c1", before='df["pr', shown='ice"]')
        >>> ask = lambda before: CompletionRequest("nb.ipynb", "c1", "tab:c1", before, "")
        >>> job.accepted_by(ask('df["price"]')), job.accepted_by(ask('df["pri'))
        (True, False)
        """
        return bool(self.shown) and request.before == self.before + self.shown

    def end(self) -> None:
        """End a job that makes no model call: an empty answer."""
        self.queue.put_nowait(CompletionChunk(done=True))
        self.queue.put_nowait(None)


class CompletionService:
    """Inline completions for notebook cells."""

    def __init__(
        self,
        docs: LiveDocuments,
        settings: AgentSettings,
        model: str | None,
        log: logging.Logger,
        variables: VariableSource | None = None,
        budgets: TokenBudgets | None = None,
    ) -> None:
        self._docs = docs
        self._settings = settings
        self._model = model
        self._log = log
        self._variables = variables
        self._budgets = budgets  # the administrator's daily token caps (the agent's)
        self._masker = settings.make_masker()
        self._provider: ModelProvider | None = settings.make_provider()
        self._listed_model: str | None = None
        self._chat_only: set[str] = set()
        """Models that said they cannot fill in the middle."""
        self._jobs: dict[str, CompletionJob] = {}
        self._accepted: list[CompletionJob] = []  # replaced, left to end
        self.usage = CompletionUsage()

    def status(self) -> dict[str, Any]:
        """Whether completions can work, with which model, what they cost; never a key."""
        configured = self._provider is not None
        return {
            "configured": configured,
            "provider": self._settings.provider_kind(),
            "model": self._configured_model(),
            "hint": None if configured else self._settings.unconfigured_hint(),
            "usage": self.usage.to_json(),
        }

    async def start(
        self,
        request: CompletionRequest,
        variables: bool = True,
        principal: str = "",
    ) -> CompletionJob:
        """Start completing ``request``, cancelling the editor's previous request.

        ``variables``: the user may read the kernel's variables (the kernel rights); without
        them none are read or sent. ``principal``: who asks, whose daily token cap the call
        counts against.

        Raises:
            JupyterLoopError: The notebook or the cell does not exist, the model is not
                allowed, or a daily token cap is reached (before any model call, so the
                handler answers 4xx).
        """
        if request.model is not None:
            self._settings.allowed_models.check(request.model)  # 403 before any model call
        budget = self._budgets.account(principal, request.path) if self._budgets else None
        if budget is not None:
            budget.check()  # 403 when today's cap is reached
        job = CompletionJob(
            request.editor_id, request.sequence, before=request.before, budget=budget
        )
        previous = self._jobs.get(request.editor_id)
        if previous is not None and request.sequence < previous.sequence:
            job.end()  # an earlier keystroke's request, overtaken on the way here
            return job
        if previous is not None:
            del self._jobs[request.editor_id]
            if previous.accepted_by(request):
                self._accepted.append(previous)
            else:
                previous.cancel()
        if self._provider is None:
            job.end()
            return job
        self._jobs[request.editor_id] = job  # before any await: a newer request sees it
        try:
            prompt = await self._prompt(request, variables)
        except BaseException:
            self._forget(job)
            raise
        if self._jobs.get(request.editor_id) is not job:
            job.end()  # a newer request from the editor came while the prompt was built
            return job
        self.usage.requests += 1
        job.task = asyncio.create_task(self._run(request, prompt, job, self._provider))
        job.task.add_done_callback(lambda _: self._finished(job))
        return job

    def _forget(self, job: CompletionJob) -> None:
        if self._jobs.get(job.editor_id) is job:
            del self._jobs[job.editor_id]

    def _finished(self, job: CompletionJob) -> None:
        if job.task is not None and job.task.cancelled():
            # Typed on: a newer request from the editor, or the browser dropped the stream.
            self.usage.cancelled += 1
        job.queue.put_nowait(None)  # also when cancelled before it ever ran
        self._forget(job)
        self._accepted = [other for other in self._accepted if other is not job]

    async def _run(
        self,
        request: CompletionRequest,
        prompt: CompletionPrompt,
        job: CompletionJob,
        provider: ModelProvider,
    ) -> None:
        try:
            model = request.model or await self._default_model(provider)
            try:
                await self._ask(job, provider, model, prompt, request.before)
            except ProviderError as e:
                named = request.model is not None  # the user's choice is never swapped
                listed = None if named else await self._relisted_model(provider, model, e)
                if listed is None:
                    raise
                await self._ask(job, provider, listed, prompt, request.before)
        except JupyterLoopError as e:
            self._failed(job, e.message)
            return
        except Exception as e:  # a bug must not leave the editor waiting
            self._log.exception("jupyter-loop: a completion failed")
            self._failed(job, f"The completion failed: {e}")
            return
        job.queue.put_nowait(CompletionChunk(done=True))

    async def _ask(
        self,
        job: CompletionJob,
        provider: ModelProvider,
        model: str,
        prompt: CompletionPrompt,
        before: str,
    ) -> None:
        """Answer with ``model``: fill-in-the-middle, or a chat prompt once it refused."""
        fill_in_middle = model not in self._chat_only
        try:
            await self._answer(job, provider, model, prompt, before, fill_in_middle)
        except ProviderError as e:
            if not (fill_in_middle and says_no_fill_in_middle(e.message)):
                raise
            self._chat_only.add(model)  # ask this model with a chat prompt from now on
            await self._answer(job, provider, model, prompt, before, False)

    async def _relisted_model(
        self, provider: ModelProvider, model: str, error: ProviderError
    ) -> str | None:
        """Another model to ask when the one picked from the server's list is gone.

        The first listed model is remembered so that each completion is one request; when
        the server no longer has it (removed, renamed), it says "not found" and the list is
        read again. None: keep the error (the model was named by the user or the settings,
        or the list still starts with it). Re-reading the list before every completion
        would notice sooner, but costs every keystroke a round trip.
        """
        if error.kind != "not_found" or model != self._listed_model:
            return None
        self._listed_model = None
        listed = await self._default_model(provider)
        return None if listed == model else listed

    async def _answer(
        self,
        job: CompletionJob,
        provider: ModelProvider,
        model: str,
        prompt: CompletionPrompt,
        before: str,
        fill_in_middle: bool,
    ) -> None:
        """Stream the model's answer, tidied, into the job's queue."""
        fences, repeat = FenceFilter(), RepeatTrimmer(before)
        events = complete(provider, model, prompt, fill_in_middle=fill_in_middle)
        try:
            async for event in events:
                if isinstance(event, TextDelta):
                    self._put(job, repeat.feed(fences.feed(event.text)))
                elif isinstance(event, Usage):
                    self.usage.input_tokens += event.input_tokens
                    self.usage.output_tokens += event.output_tokens
                    if job.budget is not None:
                        job.budget.spend(event.input_tokens + event.output_tokens)
                elif isinstance(event, StreamEnd):
                    self._put(job, repeat.feed(fences.flush()) + repeat.flush())
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()  # closes the model's HTTP stream at once

    def _failed(self, job: CompletionJob, message: str) -> None:
        self.usage.failures += 1
        self.usage.last_error = message
        job.queue.put_nowait(CompletionChunk(done=True, error=message))

    @staticmethod
    def _put(job: CompletionJob, text: str) -> None:
        if text:
            job.shown += text
            job.queue.put_nowait(CompletionChunk(text=text))

    async def _prompt(self, request: CompletionRequest, variables: bool) -> CompletionPrompt:
        room = await self._docs.room_id(request.path)
        notebook = await self._docs.notebook(room)
        cells = nearby_cells(
            notebook, request.cell_id, request.visible_cell_ids, masker=self._masker
        )
        found = await self._kernel_variables(request.path) if variables else []
        return build_prompt(
            request.before,
            request.after,
            cells.above,
            cells.below,
            found,
            nonce=new_nonce(),
            masker=self._masker,
            in_view=cells.in_view,
        )

    async def _kernel_variables(self, path: str) -> list[VariableRecord]:
        if self._variables is None:
            return []
        try:
            found = await asyncio.wait_for(self._variables.variables(path), VARIABLES_TIMEOUT)
        except (asyncio.TimeoutError, JupyterLoopError):
            return []
        return list(found)

    def _configured_model(self) -> str | None:
        configured = self._model or self._settings.default_model()
        if configured and self._settings.allowed_models.allows(configured):
            return configured
        return self._listed_model

    async def _default_model(self, provider: ModelProvider) -> str:
        model = self._configured_model()
        if model is not None:
            return model
        allowed = self._settings.allowed_models
        listed = allowed.only(info.id for info in await provider.models())
        if not listed:
            raise ProviderError(allowed.none_listed("completion_model"), kind="not_found")
        self._listed_model = listed[0]
        return self._listed_model

    async def stop(self) -> None:
        """Cancel the jobs in flight and wait for them; close the provider."""
        jobs = [*self._jobs.values(), *self._accepted]
        for job in jobs:
            job.cancel()
        for job in jobs:
            if job.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await job.task
        if self._provider is not None:
            await self._provider.aclose()
