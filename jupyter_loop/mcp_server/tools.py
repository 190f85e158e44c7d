"""The MCP tools: the agent's tools and a few more, each checked against the caller's rights.

Every tool takes the notebook's ``path``. The agent's own tools (``read_cell``,
``notebook_map``, ``propose_*``, ``run_cells``) come from its registry
(:data:`jupyter_loop.agent.tools.AGENT_TOOLS`: schema and ability in one record) and run
through the same toolbox as the server's agent
(:class:`~jupyter_loop.agent.outside.OutsideAgents`). The abilities are those of
:mod:`jupyter_loop.access.rights`, as the REST API's; arguments are checked against the schema the
client is shown (:func:`jupyter_loop.agent.tools.schema_violation`) before any tool runs.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..access.rights import Ability
from ..agent.callers import Caller
from ..agent.outside import OutsideAgents
from ..agent.tools import AGENT_TOOLS_BY_NAME
from .hints import INTERRUPTS, PROPOSES, READS_ONLY, RUNS_CODE, Hints
from .paging import CURSOR
from .tool_results import text_content, view_content, with_images

if TYPE_CHECKING:
    import mcp_types as types

READ, RUN, INTERRUPT = Ability.READ, Ability.RUN, Ability.INTERRUPT
MAX_WAIT = 600.0
DEFAULT_WAIT = 120.0
MAX_NOTEBOOKS = 500

_PATH = {
    "type": "string",
    "minLength": 1,
    "description": "The notebook's path, relative to the server root.",
}
_ID = {"type": "string", "minLength": 1}


@dataclass(frozen=True)
class McpTool:
    """One tool: its schema, the rights it needs and what it does.

    Plain fields, and the SDK's ``Tool`` made when asked (``spec``): the SDK's types take a
    fifth of a second to import, which ``jupyter lab`` would pay at every start for an
    endpoint most servers never serve.
    """

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    ability: Ability
    hints: Hints
    call: Callable[[OutsideAgents, Caller, dict[str, Any], Any], Awaitable[list[Any]]]

    @property
    def schema(self) -> dict[str, Any]:
        """What the client is shown and its arguments are checked against: a read's
        answer comes in pages within the host's limit, read on with ``cursor``."""
        if not self.hints.read_only:
            return self.input_schema
        properties = {**self.input_schema["properties"], "cursor": CURSOR}
        return {**self.input_schema, "properties": properties}

    @property
    def spec(self) -> types.Tool:
        import mcp_types as types

        hints = self.hints
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.schema,
            # 2025-11-25 tasks (``legacy_tasks``); the 2026 wire drops the field.
            execution=types.ToolExecution(task_support="optional")
            if self.name in CELLS_RUN
            else None,
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=hints.read_only,
                destructive_hint=hints.destructive,
                idempotent_hint=hints.idempotent,
                open_world_hint=hints.open_world,
            ),
        )


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"path": _PATH, **properties},
        "required": ["path", *required],
    }


def _path(args: dict[str, Any]) -> str:
    return str(args["path"])  # required, a non-empty string: checked by the schema


def _wait(args: dict[str, Any]) -> float:
    # At most MAX_WAIT from a client (its schema says so, and is checked); a task's call
    # (``tasks``) waits for the run's end, whatever it takes.
    return float(args.get("wait_seconds", DEFAULT_WAIT))


async def _list_notebooks(
    agent: OutsideAgents, caller: Caller, args: dict[str, Any], contents: Any
) -> list[Any]:
    found: list[str] = []
    folders = [""]
    while folders and len(found) < MAX_NOTEBOOKS:
        listing = await _maybe_await(contents.get(folders.pop(0), content=True, type="directory"))
        for item in listing.get("content") or []:
            if item["type"] == "directory":
                folders.append(item["path"])
            elif item["type"] == "notebook":
                found.append(item["path"])
    more = "\n(more not listed)" if len(found) >= MAX_NOTEBOOKS else ""
    receipt = f"listed {len(found)} notebooks"
    await agent.journal_call(None, "list_notebooks", caller, ok=True, receipt=receipt)
    return text_content("\n".join(sorted(found)) + more if found else "No notebooks.")


async def _maybe_await(value: Any) -> Any:
    return await value if hasattr(value, "__await__") else value


async def _read_notebook(
    agent: OutsideAgents, caller: Caller, args: dict[str, Any], _: Any
) -> list[Any]:
    focus = args.get("focus_cell_ids") or []
    images = args.get("images", True) is not False
    view = await agent.read_notebook(_path(args), caller, tuple(focus), images)
    return (await view_content(view)).content


async def _get_outputs(
    agent: OutsideAgents, caller: Caller, args: dict[str, Any], _: Any
) -> list[Any]:
    view = await agent.outputs(_path(args), str(args["cell_id"]), caller)
    return (await view_content(view)).linking(_path(args), view.links)


async def _cell_history(
    agent: OutsideAgents, caller: Caller, args: dict[str, Any], _: Any
) -> list[Any]:
    limit = int(args.get("limit", 20))
    return text_content(await agent.cell_history(_path(args), str(args["cell_id"]), caller, limit))


async def _proposal_status(
    agent: OutsideAgents, caller: Caller, args: dict[str, Any], _: Any
) -> list[Any]:
    found = await agent.proposal(_path(args), str(args["proposal_id"]), caller)
    return text_content("\n".join(f"{key}: {value}" for key, value in found.items()))


async def _interrupt(
    agent: OutsideAgents, caller: Caller, args: dict[str, Any], _: Any
) -> list[Any]:
    kernel_id = await agent.interrupt(_path(args), caller)
    return text_content(f"Interrupted kernel {kernel_id}; its queued cells were dropped.")


def _agent_tool(
    name: str,
) -> Callable[[OutsideAgents, Caller, dict[str, Any], Any], Awaitable[list[Any]]]:
    async def call(agent: OutsideAgents, caller: Caller, args: dict[str, Any], _: Any) -> list[Any]:
        wait = _wait(args) if name == "run_cells" else 0.0
        arguments = {k: v for k, v in args.items() if k not in ("path", "wait_seconds")}
        return await _answer(agent, caller, _path(args), name, arguments, wait)

    return call


async def _run_all(agent: OutsideAgents, caller: Caller, args: dict[str, Any], _: Any) -> list[Any]:
    path = _path(args)
    arguments = {"cell_ids": await agent.code_cells(path)}
    return await _answer(agent, caller, path, "run_cells", arguments, _wait(args), run_all=True)


async def _answer(
    agent: OutsideAgents,
    caller: Caller,
    path: str,
    name: str,
    arguments: dict[str, Any],
    wait: float,
    *,
    run_all: bool = False,
) -> list[Any]:
    """An agent tool's outcome as the MCP result's content (its images, and links to the
    outputs of the cells it names)."""
    outcome = await agent.call(path, name, arguments, caller, wait, run_all=run_all)
    if not outcome.ok:
        raise ToolFailed(outcome.content)
    shown = await with_images(f"{outcome.summary}\n\n{outcome.content}", outcome.images)
    linked = LINKED_CELLS.get(name)
    if linked is None:
        return shown.content
    return shown.linking(path, await agent.links(path, linked(arguments)))


LINKED_CELLS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "read_cell": lambda args: [str(args["cell_id"])],
    "run_cells": lambda args: [str(cell_id) for cell_id in args["cell_ids"]],
}
"""The agent tools whose results also link the outputs of the cells they name."""


async def _cells_named(agent: OutsideAgents, args: dict[str, Any]) -> list[str]:
    return [str(cell_id) for cell_id in args.get("cell_ids", [])]


async def _code_cells(agent: OutsideAgents, args: dict[str, Any]) -> list[str]:
    return await agent.code_cells(_path(args))


CELLS_RUN: dict[str, Callable[[OutsideAgents, dict[str, Any]], Awaitable[list[str]]]] = {
    "run_cells": _cells_named,
    "run_all": _code_cells,
}
"""The tools that run cells, and which cells a call runs: what a task of the call follows,
interrupts on cancel, and reads after a server restart (``tasks``)."""


class ToolFailed(Exception):
    """A tool call that failed in a way the calling agent should read (``isError``)."""


def _from_agent_tool(
    name: str, title: str, hints: Hints, extra: dict[str, Any] | None = None
) -> McpTool:
    registered = AGENT_TOOLS_BY_NAME[name]
    spec = registered.spec
    schema = copy.deepcopy(spec.parameters)
    schema["properties"] = {"path": _PATH, **schema.get("properties", {}), **(extra or {})}
    schema["required"] = ["path", *schema.get("required", [])]
    description = spec.description
    if name.startswith("propose_"):
        description += " Returns the proposal's id; proposal_status tells its outcome later."
    return McpTool(name, title, description, schema, registered.ability, hints, _agent_tool(name))


def _tool(
    name: str,
    title: str,
    description: str,
    schema: dict[str, Any],
    ability: Ability,
    hints: Hints,
    call: Any,
) -> McpTool:
    return McpTool(name, title, description, schema, ability, hints, call)


_WAIT = {
    "wait_seconds": {
        "type": "number",
        "minimum": 0,
        "description": f"Seconds to wait for the run (default {DEFAULT_WAIT:g}, "
        f"at most {MAX_WAIT:g}); "
        "cells still running then run on: see get_outputs.",
    }
}

TOOLS: tuple[McpTool, ...] = (
    _tool(
        "list_notebooks",
        "List notebooks",
        "The notebooks on this Jupyter server (paths to pass to the other tools).",
        {"type": "object", "properties": {}, "required": []},
        READ,
        READS_ONLY,
        _list_notebooks,
    ),
    _tool(
        "read_notebook",
        "Read a notebook",
        "The notebook as jupyter-loop's assistant sees it: a map of every cell (id, type, "
        "execution count, first line, output summary) and the cells in focus in full with "
        "summarised outputs (default: the most recently run). Secrets are masked; notebook "
        "content is wrapped as data.",
        _schema(
            {
                "focus_cell_ids": {"type": "array", "items": _ID},
                "images": {"type": "boolean", "description": "Attach images (default true)."},
            },
            [],
        ),
        READ,
        READS_ONLY,
        _read_notebook,
    ),
    _from_agent_tool("notebook_map", "Map a notebook's cells", READS_ONLY),
    _from_agent_tool("read_cell", "Read a cell", READS_ONLY),
    _from_agent_tool("propose_modify", "Propose a cell edit", PROPOSES),
    _from_agent_tool("propose_insert", "Propose a new cell", PROPOSES),
    _from_agent_tool("propose_delete", "Propose deleting a cell", PROPOSES),
    _tool(
        "proposal_status",
        "A proposal's status",
        "The outcome of a proposal: pending, accepted or rejected (and by whom).",
        _schema({"proposal_id": _ID}, ["proposal_id"]),
        READ,
        READS_ONLY,
        _proposal_status,
    ),
    _from_agent_tool("run_cells", "Run cells", RUNS_CODE, _WAIT),
    _tool(
        "run_all",
        "Run all cells",
        "Run every code cell of the notebook, top to bottom, as JupyterLab's Run All does, "
        "and wait for their outputs (the run history calls it a Run All). The user may "
        "have to approve first, and may refuse.",
        _schema(dict(_WAIT), []),
        RUN,
        RUNS_CODE,
        _run_all,
    ),
    _tool(
        "get_outputs",
        "A cell's outputs",
        "A cell's run state and its outputs, summarised (read_cell pages the full output); "
        "its images and long outputs also as resource links, to read whole when needed.",
        _schema({"cell_id": _ID}, ["cell_id"]),
        READ,
        READS_ONLY,
        _get_outputs,
    ),
    _tool(
        "cell_history",
        "A cell's run history",
        "A cell's runs, newest first: when, how each ended, who started it and through what "
        "(a tab, the assistant's turn, an MCP client, the terminal, a Run All), the kernel "
        "and the source it ran (secrets masked).",
        _schema(
            {
                "cell_id": _ID,
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 200,
                    "description": "Runs to list (default 20).",
                },
            },
            ["cell_id"],
        ),
        READ,
        READS_ONLY,
        _cell_history,
    ),
    _tool(
        "interrupt",
        "Interrupt the kernel",
        "Interrupt the notebook's kernel; cells queued behind the running one are dropped.",
        _schema({}, []),
        INTERRUPT,
        INTERRUPTS,
        _interrupt,
    ),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
