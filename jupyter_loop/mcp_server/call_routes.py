"""How a checked MCP tool call is answered: a table of routes, the first that applies wins.

The endpoint (:mod:`.endpoint`) checks a call once (the tool exists, the caller holds its
right, the arguments fit the schema the client is shown); then the call is answered as a
2025-11-25 task (:mod:`.legacy_tasks`), a 2026 task (:mod:`.tasks`), held for the
client's form (2026 ``input_required``, :mod:`.held_calls`), or in the request with
progress. A new way to answer is a row of :meth:`CallRoutes.answer`, not a new branch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..access.rights import Ability, Grants
from ..agent.asking import DirectPrompt
from ..agent.callers import Caller
from ..agent.outside import OutsideAgents
from ..errors import JupyterLoopError
from . import legacy_tasks
from .elicitation import answered_in_client, shows_forms
from .held_calls import HeldCalls, speaks_input_required
from .progress import with_progress
from .tasks import TASK_TOOLS, TTL_SECONDS, McpTasks, asks_for_tasks
from .tools import CELLS_RUN
from .traits import McpLimits

if TYPE_CHECKING:
    import mcp_types as types


class CallRoutes:
    """The ways a checked tool call is answered."""

    def __init__(
        self, agent: OutsideAgents, tasks: McpTasks, held: HeldCalls, limits: McpLimits
    ) -> None:
        self._agent = agent
        self._tasks = tasks
        self._held = held
        self._limits = limits

    async def answer(self, call: CheckedCall) -> Any:
        """The call's answer by the first route that applies to it."""
        routes: tuple[tuple[Callable[[CheckedCall], bool], _Route], ...] = (
            (_legacy_task, self._as_legacy_task),
            (_task, self._as_task),
            (_held, self._as_held),
            (lambda call: True, self._in_request),
        )
        for applies, route in routes:
            if applies(call):
                return await route(call)
        raise AssertionError("the last route applies to every call")

    async def _task_start(self, call: CheckedCall) -> tuple[list[str], Any] | types.CallToolResult:
        """The cells a task follows and what it runs; a failed result if no notebook."""
        try:
            cell_ids = await CELLS_RUN[call.params.name](self._agent, call.arguments)
        except JupyterLoopError as e:  # no such notebook
            return await call.failed(e.message)
        # The call outlives its request: it waits for the run's end (the task's life),
        # and puts its questions to the client through the task, not the request.
        whole_run = {**call.arguments, "wait_seconds": TTL_SECONDS}

        def as_task(prompt: DirectPrompt | None) -> Awaitable[types.CallToolResult]:
            return call.answer(replace(call.caller, direct=prompt), whole_run)

        return cell_ids, as_task

    async def _as_legacy_task(self, call: CheckedCall) -> Any:
        """A 2025-11-25 task: its questions go through ``tasks/result`` (``legacy_tasks``)."""
        started = await self._task_start(call)
        if not isinstance(started, tuple):
            return started
        cell_ids, as_task = started
        path = str(call.arguments.get("path"))
        first = await self._agent.run_status(path, call.caller)
        created = await self._tasks.start(
            call.grants, path, cell_ids, as_task,
            legacy_asking_as(call.grants, call.ctx), status=first,
        )  # fmt: skip
        return {"task": legacy_tasks.task(created)}

    async def _as_task(self, call: CheckedCall) -> Any:
        """A task of the 2026 tasks extension."""
        started = await self._task_start(call)
        if not isinstance(started, tuple):
            return started
        cell_ids, as_task = started
        path = str(call.arguments.get("path"))
        first = await self._agent.run_status(path, call.caller)
        by = asking_as(call.grants, call.ctx)
        return await self._tasks.start(call.grants, path, cell_ids, as_task, by, status=first)

    async def _as_held(self, call: CheckedCall) -> Any:
        """A 2026 client that shows forms: the approval goes back as "input required"."""
        params = call.params
        if params.request_state is not None:
            return await self._held.resume(
                params.request_state, call.grants.principal, params.input_responses
            )
        by = asking_as(call.grants, call.ctx)
        assert by is not None  # the route applies only then

        def held(prompt: DirectPrompt) -> Awaitable[types.CallToolResult]:
            return call.answer(replace(call.caller, direct=prompt), call.arguments)

        return await self._held.start(call.grants.principal, by, held)

    async def _in_request(self, call: CheckedCall) -> Any:
        """Answered in the request's own answer, with progress while it takes."""
        return await with_progress(
            call.ctx.session, call.answer(call.caller, call.arguments),
            self._limits.progress_interval,
        )  # fmt: skip


@dataclass(frozen=True)
class CheckedCall:
    """A tool call past the checks (tool known, right held, arguments valid), and the two
    ways it ends: ``answer`` runs the tool, ``failed`` journals a refusal."""

    ctx: Any
    params: types.CallToolRequestParams
    grants: Grants
    caller: Caller
    arguments: dict[str, Any]
    answer: Callable[[Caller, dict[str, Any]], Awaitable[types.CallToolResult]]
    failed: Callable[[str], Awaitable[types.CallToolResult]]


_Route = Callable[[CheckedCall], Awaitable[Any]]


def _legacy_task(call: CheckedCall) -> bool:
    return call.params.name in TASK_TOOLS and legacy_tasks.asks_for_legacy_task(
        call.ctx, call.params
    )


def _task(call: CheckedCall) -> bool:
    return call.params.name in TASK_TOOLS and asks_for_tasks(call.ctx)


def _held(call: CheckedCall) -> bool:
    return call.params.name in CELLS_RUN and asking_as(call.grants, call.ctx) is not None


def asking_as(grants: Grants, ctx: Any) -> str | None:
    """How a client's person's answers are recorded, when a run's questions may be put to
    them in the request's answer (2026 protocol, a client that shows forms, a caller who
    may run: answering is approving); ``None`` otherwise."""
    if grants.allows(Ability.RUN) and speaks_input_required(ctx):
        return answered_in_client(grants.user)
    return None


def legacy_asking_as(grants: Grants, ctx: Any) -> str | None:
    """The same for a 2025-11-25 task, whose questions go through ``tasks/result``: a
    client that said in ``initialize`` it shows forms, a caller who may run."""
    if legacy_tasks.is_legacy(ctx) and grants.allows(Ability.RUN) and shows_forms(ctx):
        return answered_in_client(grants.user)
    return None
