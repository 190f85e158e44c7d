"""Long ``run_cells`` calls as MCP tasks (the ``io.modelcontextprotocol/tasks`` extension).

A client that says, in its request's capabilities (2026 protocol), that it speaks the
extension gets a task at once for ``run_cells`` (and ``run_all``) instead of a result: the
approval and the run go on on the server, and the client polls ``tasks/get`` for the
status and, once the cells have run, the very result the call would have answered.
``tasks/cancel`` interrupts the notebook's kernel, as the ``interrupt`` tool does. A client
without the extension waits on its call (``wait_seconds``), as before.

A task is its record on disk (``task_book``), so a client polls the same id after its own
restart, and after the server's. A restarted server has no call left to finish a task of
the one before: when polled, such a task ends with the cells' outputs as the notebook shows
them, once its cells no longer run (the restart ended them, or a kept kernel finished them).

Only the task's maker (the same principal: the same user, or the same scoped token) sees a
task; to anyone else it does not exist. Polls are not journaled (a client may poll every
second): the call is, when it ends, and a cancel is, as an interrupt.

A client that also says it can show forms (and whose caller may run) is asked, besides
every tab, through the task: while the run waits for an approval, or for a cell's
``input()``, ``tasks/get`` answers ``input_required`` with the form among its
``inputRequests`` (the same form as on a back-channel, :mod:`.elicitation`, under a key
new for each question), and the client's ``tasks/update`` with its ``inputResponses``
answers it. The first answer wins, from a tab or from there; a question a tab answered
is withdrawn from the task. Answering needs the right to run (``ABILITIES``): it is an
approval's answer. A task of an earlier server process whose cells still run on a kept
kernel asks their ``input()`` prompts the same way, once such a client polls it (the
questions of the call that made it ended with that process).

Rejected: asking a cell's ``input()`` of a client whose call has ended other than through
a request of its own (a task's poll, a held call's retry). The spec forbids requests to a
client that are not part of one of its requests (SEP-2260), and the 2026 protocol has no
channel for them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ..access.rights import Ability, Grants
from ..agent.asking import DirectPrompt
from ..agent.callers import Caller
from ..agent.outside import OutsideAgents
from ..errors import JupyterLoopError
from .elicitation import Form, asking_by_forms
from .refusals import refusal
from .task_book import CANCELLED, COMPLETED, TERMINAL, WORKING, TaskBook, TaskRecord
from .tools import CELLS_RUN

if TYPE_CHECKING:
    import mcp_types as types

TASKS = "io.modelcontextprotocol/tasks"
"""The extension's identifier, in the client's and the server's capabilities."""

TASK_TOOLS = frozenset(CELLS_RUN)
"""The tools that answer with a task when the client speaks the extension: those that run
cells."""

ABILITIES = {
    "tasks/get": Ability.READ,
    "tasks/result": Ability.READ,
    "tasks/update": Ability.RUN,
    "tasks/cancel": Ability.INTERRUPT,
}
"""What each of the extension's methods needs, besides being the task's maker (checked by
the endpoint's one rights check, ``refusals``; ``docs/rights.md`` lists them)."""

POLL_SECONDS = 1.0
TTL_SECONDS = 24 * 3600.0
INPUT_REQUIRED = "input_required"
"""A working task's status while it waits on its client's answer (never stored: the
question lives with the call, which a restart ends)."""


def asks_for_tasks(ctx: Any) -> bool:
    """Whether the request's client said it speaks the tasks extension (per request, as
    the 2026 protocol sends its capabilities). Never on an older protocol: its wire has no
    result shape of an extension (the SDK would refuse to send one)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if getattr(ctx, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS:
        return False
    connection = getattr(ctx, "connection", None) or getattr(ctx, "session", None)
    capabilities = getattr(connection, "client_capabilities", None)
    extensions = getattr(capabilities, "extensions", None) or {}
    return TASKS in extensions


def task_methods() -> dict[str, type[Any]]:
    """The extension's methods and the model of their parameters (made on first use: the
    SDK's types are not imported with the server)."""
    from mcp_types import RequestParams

    class TaskParams(RequestParams):
        task_id: str

    class TaskUpdateParams(TaskParams):
        input_responses: dict[str, Any] = {}

    return {
        "tasks/get": TaskParams,
        "tasks/result": TaskParams,  # 2025-11-25 only (``legacy_tasks``)
        "tasks/cancel": TaskParams,
        "tasks/update": TaskUpdateParams,
    }


@dataclass(frozen=True)
class _Question:
    """What a task waits on its client for: a form, offered under ``key``."""

    key: str
    form: Form
    answer: asyncio.Future[Any]


class McpTasks:
    """The tasks of outside agents: made from calls, polled, answered, cancelled."""

    def __init__(self, agent: OutsideAgents, book: TaskBook, log: logging.Logger) -> None:
        self._agent = agent
        self._book = book
        self._log = log
        self._calls: dict[str, asyncio.Task[None]] = {}
        self._questions: dict[str, _Question] = {}  # task id: the question it waits on
        self._keys = itertools.count(1)

    async def start(
        self,
        grants: Grants,
        path: str,
        cell_ids: list[str],
        call: Callable[[DirectPrompt | None], Awaitable[types.CallToolResult]],
        asking_as: str | None = None,
        status: str = "Running the cells.",
    ) -> dict[str, Any]:
        """The ``CreateTaskResult`` of a call that goes on as a task (stored first: a
        ``tasks/get`` for it answers from the moment it is returned). With ``asking_as``
        (how its person's answers are recorded), the call's questions are also put to the
        client through the task. ``status``: the task's first status message (what the run
        waits for first)."""
        record = self._book.add(TaskRecord.working(grants.principal, path, cell_ids, status))
        prompt = None
        if asking_as is not None:
            prompt = asking_by_forms(partial(self._ask, record.task_id), asking_as)
        finishing = self._finish(record, lambda: call(prompt))
        self._calls[record.task_id] = asyncio.ensure_future(finishing)
        return {"resultType": "task", **self._wire(record)}

    async def _ask(self, task_id: str, form: Form) -> Any:
        """Offer ``form`` in the task until the client answers it (or the call stops
        waiting: a tab answered, the run ended)."""
        key = f"{form.kind}-{next(self._keys)}"  # never reused: the spec wants new keys
        question = _Question(key, form, asyncio.get_running_loop().create_future())
        self._questions[task_id] = question
        try:
            return await question.answer
        finally:
            if self._questions.get(task_id) is question:
                del self._questions[task_id]

    async def stop(self) -> None:
        """Stop following the calls (their records stay; the next server ends them)."""
        for call in self._calls.values():
            call.cancel()
        await asyncio.gather(*self._calls.values(), return_exceptions=True)

    async def _finish(
        self, record: TaskRecord, call: Callable[[], Awaitable[types.CallToolResult]]
    ) -> None:
        try:
            result = await call()
        except asyncio.CancelledError:
            return  # cancelled by the client (its record says so) or by the server stopping
        except Exception as e:  # the call's own errors are results: this is a bug of ours
            self._log.exception("jupyter-loop: MCP task %s failed", record.task_id)
            failed = _text_result(f"The run failed: {e}", error=True)
            self._book.put(record.ended(COMPLETED, "The run failed.", failed))
            return
        finally:
            self._calls.pop(record.task_id, None)
        found = self._book.get(record.task_id)
        if found is not None and found.status in TERMINAL:
            return  # cancelled while the call ended
        message = "The call ended in an error." if result.is_error else "The cells ran."
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        self._book.put(record.ended(COMPLETED, message, wire))

    async def get(
        self, task_id: str, grants: Grants, caller: Caller, asking_as: str | None = None
    ) -> dict[str, Any]:
        """The task's state; with ``asking_as`` (the client shows forms), a task of an
        earlier server process asks its running cells' ``input()`` from now on."""
        record = self._visible(task_id, grants, "tasks/get")
        if record.status == WORKING and task_id not in self._calls:
            record = await self._left_by_restart(record, caller, asking_as)
        found = {"resultType": "complete", **self._wire(record)}
        question = self._questions.get(task_id)
        if record.status == WORKING and question is not None and not question.answer.done():
            wire = question.form.request().model_dump(by_alias=True, mode="json", exclude_none=True)
            found.update(status=INPUT_REQUIRED, inputRequests={question.key: wire})
        return found

    async def update(
        self, task_id: str, grants: Grants, responses: dict[str, Any]
    ) -> dict[str, Any]:
        """Answer the question the task waits on; a response to any other key (a question
        answered meanwhile, or never asked) is ignored, as the spec says."""
        self._visible(task_id, grants, "tasks/update")
        question = self._questions.get(task_id)
        if question is not None and not question.answer.done() and question.key in responses:
            question.answer.set_result(question.form.answer(responses[question.key]))
        return {"resultType": "complete"}

    async def result(
        self,
        task_id: str,
        grants: Grants,
        caller: Caller,
        asking_as: str | None = None,
        pose: Callable[[Form], Awaitable[Any]] | None = None,
    ) -> dict[str, Any]:
        """The call's result once the task has ended (2025-11-25 ``tasks/result``: it
        waits for the end, polling the record as ``tasks/get`` does, so a task of an
        earlier server process ends here too). With ``pose`` (the client shows forms), a
        question the task waits on is put to the client through this request's stream, as
        that protocol asks of a task in ``input_required``."""
        from mcp.shared.exceptions import MCPError
        from mcp_types.jsonrpc import INVALID_PARAMS

        while True:
            found = await self.get(task_id, grants, caller, asking_as)
            if found["status"] in TERMINAL:
                break
            question = self._questions.get(task_id)
            if pose is not None and question is not None and not question.answer.done():
                await _put(question, pose)
                continue
            await asyncio.sleep(POLL_SECONDS)
        if found["status"] == CANCELLED or "result" not in found:
            raise MCPError(INVALID_PARAMS, f"The task has no result: {found['statusMessage']}")
        result: dict[str, Any] = found["result"]
        return result

    async def cancel(
        self, task_id: str, grants: Grants, caller: Caller, *, ended_is_error: bool = False
    ) -> dict[str, Any]:
        """Cancel the task; its state after. ``ended_is_error``: a task already ended is
        refused (2025-11-25), rather than left as it is (the 2026 extension)."""
        record = self._visible(task_id, grants, "tasks/cancel")
        if record.status in TERMINAL:
            if ended_is_error:
                from mcp.shared.exceptions import MCPError
                from mcp_types.jsonrpc import INVALID_PARAMS

                raise MCPError(INVALID_PARAMS, f"The task has already ended ({record.status}).")
            return {"resultType": "complete", **self._wire(record)}
        if await self._agent.running(record.path, list(record.cell_ids)):
            await self._agent.interrupt(record.path, caller)  # journaled there
        call = self._calls.pop(task_id, None)
        if call is not None:
            call.cancel()  # waiting for an approval or for the run's end: it stops waiting
        message = "Cancelled by the client: the kernel was interrupted."
        cancelled = record.ended(CANCELLED, message, None)
        self._book.put(cancelled)
        return {"resultType": "complete", **self._wire(cancelled)}

    def _visible(self, task_id: str, grants: Grants, method: str) -> TaskRecord:
        """The task if ``grants`` made it (refused as "no such task" otherwise, so that
        nobody learns of another's tasks) and may call ``method`` on it."""
        from mcp.shared.exceptions import MCPError
        from mcp_types.jsonrpc import INVALID_PARAMS

        record = self._book.get(task_id)
        if record is None or record.principal != grants.principal:
            raise MCPError(INVALID_PARAMS, "No such task (unknown, expired or not yours).")
        refused = refusal(grants, ABILITIES[method], method, record.path)
        if refused:
            raise MCPError(INVALID_PARAMS, refused)
        return record

    async def _left_by_restart(
        self, record: TaskRecord, caller: Caller, asking_as: str | None
    ) -> TaskRecord:
        """A task of an earlier server process: it ends once its cells no longer run, with
        their outputs as the notebook shows them."""
        cell_ids = list(record.cell_ids)
        if await self._agent.running(record.path, cell_ids):
            # Followed again on a kept kernel: it ends when they do.
            if asking_as is not None:
                self._ask_again(record, asking_as)
            return record
        parts: list[str] = []
        for cell_id in cell_ids:
            try:
                parts.append((await self._agent.outputs(record.path, cell_id, caller)).text)
            except JupyterLoopError as e:  # the cell (or the notebook) is gone since
                parts.append(f"cell {cell_id}: {e.message}")
        text = "\n\n".join(parts)
        message = (
            "The server restarted during this task; its result is the cells' outputs as "
            "the notebook shows them now."
        )
        ended = record.ended(COMPLETED, message, _text_result(f"{message}\n\n{text}"))
        self._book.put(ended)
        return ended

    def _ask_again(self, record: TaskRecord, asking_as: str) -> None:
        """Follow a task of an earlier process while its cells run, putting their
        ``input()`` prompts to the client through the task."""
        task_id = record.task_id
        prompt = asking_by_forms(partial(self._ask, task_id), asking_as)
        following = asyncio.ensure_future(
            self._agent.ask_while_running(record.path, list(record.cell_ids), prompt)
        )
        self._calls[task_id] = following

        def done(_: asyncio.Future[None]) -> None:
            if self._calls.get(task_id) is following:  # the next poll ends the task
                del self._calls[task_id]

        following.add_done_callback(done)

    def _wire(self, record: TaskRecord) -> dict[str, Any]:
        return record.wire(self._book.ttl, POLL_SECONDS)


async def _put(question: _Question, pose: Callable[[Form], Awaitable[Any]]) -> None:
    """Ask ``question`` through ``pose`` until the client answers (its answer is the
    question's, ``None`` if it gave none: the tabs may still answer) or a tab does (the
    client's form is then withdrawn: its request cancelled)."""
    asking = asyncio.ensure_future(pose(question.form))
    try:
        await asyncio.wait({asking, question.answer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not asking.done():
            asking.cancel()
    if asking.done() and not asking.cancelled() and not question.answer.done():
        question.answer.set_result(asking.result())


def _text_result(text: str, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}
