"""The client's half of the MCP tasks extension, for tests and benches: the shapes a client
reads (a created task, a polled one) and the requests it sends, on the SDK's own client
(``ClientSession(extensions=..., result_claims=CLAIMS)``)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import mcp_types as types
from mcp.client.extension import ResultClaim
from pydantic import ConfigDict

TASKS = "io.modelcontextprotocol/tasks"


class CreatedTask(types.Result):
    """The spec's ``CreateTaskResult``, as a client reads it."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str


class TaskState(types.Result):
    """A ``tasks/get`` answer."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskIdParams(types.RequestParams):
    task_id: str


class TaskUpdateParams(TaskIdParams):
    input_responses: dict[str, Any]


class TaskUpdateRequest(types.Request):
    """``tasks/update`` with the client's answers, keyed as the task's ``inputRequests``."""

    name_param: ClassVar[str] = "taskId"
    method: Literal["tasks/update"] = "tasks/update"
    params: TaskUpdateParams


class TaskRequest(types.Request):
    """``tasks/get``, ``tasks/update``, ``tasks/cancel``: the task's id also goes in the
    ``Mcp-Name`` header, as the spec asks of a client."""

    name_param: ClassVar[str] = "taskId"
    method: str
    params: TaskIdParams


async def _polled_by_the_caller(task: CreatedTask, context: Any) -> types.CallToolResult:
    raise AssertionError("call with allow_claimed=True and poll the task")


CLAIMS = {
    TASKS: [ResultClaim(result_type="task", model=CreatedTask, resolve=_polled_by_the_caller)]
}
"""The claim that lets the SDK's client read a ``tools/call`` answered with a task."""


async def task_method(session: Any, method: str, task_id: str) -> Any:
    """Send one of the extension's methods; a ``tasks/get`` answer as :class:`TaskState`."""
    request = TaskRequest(method=method, params=TaskIdParams(task_id=task_id))
    return await session.send_request(request, TaskState if method == "tasks/get" else types.Result)


async def answer_task(session: Any, task_id: str, responses: dict[str, Any]) -> None:
    """Send the person's answers to the task's input requests (``ElicitResult`` JSON)."""
    params = TaskUpdateParams(task_id=task_id, input_responses=responses)
    await session.send_request(TaskUpdateRequest(params=params), types.Result)
