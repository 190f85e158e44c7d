"""Tasks on the 2025-11-25 protocol (SEP-1686), the one the TypeScript SDK 1.x speaks, and
with it most desktop and IDE hosts.

The same tasks as :mod:`.tasks` (the same records, rights, cancel and restart rules), in
that protocol's shapes: the server says ``tasks`` in its capabilities and
``execution.taskSupport: "optional"`` on the tools that run cells; a client asks for a
task by sending ``task`` in a ``tools/call``'s params and gets a ``CreateTaskResult``
(``{"task": Task}``); ``tasks/get`` answers the ``Task`` itself; ``tasks/result`` waits
for the end and answers the call's ``CallToolResult``; ``tasks/cancel`` answers the
cancelled ``Task`` and refuses a task already ended. The fields differ from the 2026
extension's by name (``ttl``, ``pollInterval``) and the result is never inside the task.

The SDK checks every ``tools/call`` answer on this wire against ``CallToolResult``, which a
``CreateTaskResult`` is not; a task-augmented call of a tool that runs cells is therefore
routed (:class:`TaskCallRoute`, a server middleware) to a method of ours
(:data:`TASK_CALL`) whose answer the SDK sends as it is, with the same handler behind it.

A question a legacy task's run asks (a cell's ``input()``; an approval only where
``mcp_client_approvals`` allows it) is put to the notebook's tabs and, when the client said
in ``initialize`` that it shows forms and its caller may run, to the client the way that
protocol asks: ``tasks/get`` says ``input_required`` while the question waits, and the
client's ``tasks/result`` (which waits for the end) gets the form as an
``elicitation/create`` request on its own stream; the first answer wins, and a question a
tab answered withdraws the client's form (``McpTasks.result``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types as types

TASK_CALL = "jupyter-loop/tools/call-as-task"
"""Where a 2025-11-25 task-augmented ``tools/call`` goes (see the module docstring)."""
RELATED_TASK = "io.modelcontextprotocol/related-task"


def is_legacy(ctx: Any) -> bool:
    """Whether the request came on a protocol before 2026 (with ``initialize``)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return getattr(ctx, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS


def asks_for_legacy_task(ctx: Any, params: Any) -> bool:
    """Whether a ``tools/call`` asks for a task the 2025-11-25 way (``params.task``)."""
    return is_legacy(ctx) and getattr(params, "task", None) is not None


class TaskCallRoute:
    """Server middleware: a 2025-11-25 ``tools/call`` that asks for a task, of a tool
    that offers one (``task_tools``), goes to :data:`TASK_CALL`."""

    def __init__(self, task_tools: frozenset[str]) -> None:
        self._task_tools = task_tools

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params
        if (
            ctx.method == "tools/call"
            and is_legacy(ctx)
            and isinstance(params, Mapping)
            and isinstance(params.get("task"), Mapping)
            and params.get("name") in self._task_tools
        ):
            return await call_next(replace(ctx, method=TASK_CALL))
        return await call_next(ctx)


def capability() -> types.ServerTasksCapability:
    """What the server says of tasks in ``initialize``: ``tools/call`` may be a task, and
    a task may be cancelled (listing is not offered: a task is polled by its id)."""
    import mcp_types as types

    return types.ServerTasksCapability(
        cancel=types.TasksCancelCapability(),
        requests=types.ServerTasksRequestsCapability(
            tools=types.TasksToolsCapability(call=types.TasksCallCapability())
        ),
    )


def task(wire: dict[str, Any]) -> dict[str, Any]:
    """The 2025-11-25 ``Task`` of a task in the 2026 extension's shape (``tasks``).

    >>> task({"resultType": "complete", "taskId": "t", "status": "completed",
    ...       "statusMessage": "done", "createdAt": "a", "lastUpdatedAt": "b",
    ...       "ttlMs": 60000, "pollIntervalMs": 1000, "result": {"content": []}})
    {'taskId': 't', 'status': 'completed', 'statusMessage': 'done', 'createdAt': 'a', \
'lastUpdatedAt': 'b', 'ttl': 60000, 'pollInterval': 1000}
    """
    fields = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt")
    found = {key: wire[key] for key in fields if key in wire}
    found.update(ttl=wire.get("ttlMs"), pollInterval=wire.get("pollIntervalMs"))
    return found


def with_related_task(result: dict[str, Any], task_id: str) -> dict[str, Any]:
    """A task's result as ``tasks/result`` answers it: the call's result, marked as the
    task's (the spec's ``related-task`` metadata)."""
    meta = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": task_id}}
    return {**result, "_meta": meta}
