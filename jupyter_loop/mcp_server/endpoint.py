"""``{base_url}api/jupyter-loop/mcp``: MCP over Streamable HTTP, inside the Jupyter server.

The protocol is the official SDK's: a low-level :class:`mcp.server.lowlevel.Server` with its
handlers (list and call tools; list, template and read resources: cell outputs, see
:mod:`.resources`; the tasks extension's methods, see :mod:`.tasks`), and its
:class:`StreamableHTTPSessionManager` for sessions and SSE. Tornado authenticates the
request like every Jupyter API request (token header, JupyterHub token through the proxy;
:mod:`.handler`), then hands it to the SDK through :mod:`.bridge`; the scope carries the
caller's :class:`~jupyter_loop.access.rights.Grants` (every right asked of the authorizer,
awaited, once per request), so each tool call is authorized with the server's authorizer
against the request that carries it. The session manager's task group lives in one task
owned by :class:`McpEndpoint`, stopped with the extension.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tornado import web

from .. import __version__
from ..access.rights import Ability, Grants
from ..agent.callers import Caller, client_claim
from ..agent.outside import OutsideAgents
from ..agent.tools import given, schema_violation
from ..errors import JupyterLoopError
from . import legacy_tasks, resources
from .bridge import TornadoExchange
from .call_routes import CallRoutes, CheckedCall, asking_as, legacy_asking_as
from .elicitation import back_channel, client_prompt
from .held_calls import HeldCalls
from .paging import paged
from .refusals import refusal
from .sessions import SESSION_HEADER, McpSessions, scope_user
from .task_book import TaskBook
from .tasks import TASK_TOOLS, TASKS, TTL_SECONDS, McpTasks, task_methods
from .tools import TOOLS, TOOLS_BY_NAME, ToolFailed
from .traits import McpLimits

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

GRANTS_KEY = "jupyter_loop.grants"
AGENT_KEY = "jupyter_loop.agent"
"""The ACP agent whose session token the request carries (the server's word), or ""."""


class McpEndpoint:
    """The MCP server and its session manager, running while the extension runs."""

    def __init__(
        self,
        agent: OutsideAgents,
        contents: Any,
        log: logging.Logger,
        idle_timeout: float,
        tasks_dir: Path,
        limits: McpLimits | None = None,
    ) -> None:
        self._agent = agent
        self._limits = limits or McpLimits()
        self._tasks = McpTasks(agent, TaskBook(tasks_dir, TTL_SECONDS), log)
        self._held = HeldCalls()
        self._routes = CallRoutes(agent, self._tasks, self._held, self._limits)
        self._contents = contents
        self._log = log
        self._idle_timeout = idle_timeout
        self.manager: StreamableHTTPSessionManager | None = None
        self._ready = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.sessions = McpSessions()

    def _session_manager(self) -> StreamableHTTPSessionManager:
        """The SDK's server and session manager, made for the first MCP request.

        Importing the SDK's server half costs about half a second, added to every
        ``jupyter lab`` start if done with the extension (``bench/cli_startup.py``); most
        servers never see an MCP client. Rejected: a separate import-on-load module flag,
        which would still pay on start.
        """
        import mcp_types as types
        from mcp.server.lowlevel import Server
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        class TasksOnEveryProtocol(Server[Any]):
            """Says ``tasks`` in a 2025-11-25 ``initialize`` (the SDK's capabilities
            never do: it serves the 2026 tasks extension only)."""

            def get_capabilities(self, *args: Any, **kwargs: Any) -> types.ServerCapabilities:
                found = super().get_capabilities(*args, **kwargs)
                if kwargs.get("protocol_version") in MODERN_PROTOCOL_VERSIONS:
                    return found
                return found.model_copy(update={"tasks": legacy_tasks.capability()})

        server: Server[Any] = TasksOnEveryProtocol(
            "jupyter-loop",
            version=__version__,  # the SDK's default is "": clients show it in their lists
            instructions=(
                "Notebooks on a Jupyter server with jupyter-loop. Edits are proposals the user "
                "accepts or rejects; runs happen on the server and may need the user's approval."
            ),
            on_list_tools=self._list_tools,
            # A task's answer is the extension's result shape (a dict the SDK sends as it is,
            # ``tasks``), outside the SDK's type for this handler.
            on_call_tool=self._call_tool,  # type: ignore[arg-type]
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
        )
        server.extensions[TASKS] = {}
        handlers = {
            "tasks/get": self._get_task,
            "tasks/result": self._task_result,
            "tasks/cancel": self._cancel_task,
            "tasks/update": self._update_task,
        }
        for method, params_type in task_methods().items():
            server.add_request_handler(method, params_type, handlers[method])
        # A 2025-11-25 task-augmented call: its answer is not a CallToolResult.
        server.middleware.append(legacy_tasks.TaskCallRoute(TASK_TOOLS))
        server.add_request_handler(
            legacy_tasks.TASK_CALL,
            types.CallToolRequestParams,
            self._call_tool,
        )
        return StreamableHTTPSessionManager(server, session_idle_timeout=self._idle_timeout)

    async def _run(self) -> None:
        assert self.manager is not None
        async with self.manager.run():
            self._ready.set()
            await self._stopping.wait()

    async def stop(self) -> None:
        await self._tasks.stop()
        await self._held.stop()
        self._stopping.set()
        if self._task is not None:
            await asyncio.wait([self._task], timeout=5)

    async def serve(
        self,
        exchange: TornadoExchange,
        grants: Grants,
        method: str,
        session_id: str,
        agent: str = "",
    ) -> None:
        """Serve one request of ``grants.principal`` (``session_id``: the header it sent;
        ``agent``: the ACP agent its token was minted for)."""
        if self._task is None:  # started by the first request, on the server's event loop
            self.manager = self._session_manager()
            self._task = asyncio.ensure_future(self._run())
        await self._ready.wait()
        assert self.manager is not None

        def started(status: int, headers: dict[str, str]) -> None:
            minted = headers.get(SESSION_HEADER, "")
            if not session_id and minted and status < 400:
                self.sessions.minted(minted, grants.principal)
            if method == "DELETE" and session_id and status < 300:
                self.sessions.ended(session_id, grants.principal)

        exchange.on_start = started
        extra = {GRANTS_KEY: grants, AGENT_KEY: agent, "user": scope_user(grants.principal)}
        await exchange.serve(self.manager.handle_request, extra)

    # -- MCP handlers ----------------------------------------------------------------

    def _caller(self, ctx: Any) -> tuple[Grants, Caller]:
        grants: Grants = ctx.request.scope[GRANTS_KEY]
        sent = ctx.request.headers.get(SESSION_HEADER, "")
        caller = Caller(
            grants.user,
            _client_name(ctx),
            self.sessions.validated(sent, grants.principal),
            grants.principal,
            # answering an approval needs the right to run, as in a tab
            client_prompt(ctx, grants.user, self._log) if grants.allows(Ability.RUN) else None,
            agent=str(ctx.request.scope.get(AGENT_KEY) or ""),
        )
        return grants, caller

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        import mcp_types as types

        return types.ListResourcesResult(resources=[])

    async def _list_resource_templates(
        self, ctx: Any, params: Any
    ) -> types.ListResourceTemplatesResult:
        return resources.templates()

    async def _read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        from mcp.shared.exceptions import MCPError
        from mcp_types.jsonrpc import INVALID_PARAMS

        grants, caller = self._caller(ctx)
        address = resources.parse_uri(params.uri)
        path = address.path if address is not None else None

        async def failed(message: str) -> MCPError:
            await self._agent.journal_call(path, "read_resource", caller, ok=False, receipt=message)
            return MCPError(INVALID_PARAMS, message)

        if address is None:
            raise await failed(f"No resource {client_claim(params.uri)} on this server.")
        refused = refusal(grants, resources.ABILITY, "reading a cell", path)
        if refused:
            raise await failed(refused)
        try:
            if isinstance(address, resources.FocusAddress):
                text = await self._agent.current_cell(address.path, caller)
                return resources.text_result(params.uri, text)
            content = await self._agent.output(
                address.path, address.cell_id, address.index, address.run, caller
            )
        except JupyterLoopError as e:
            raise await failed(e.message) from None
        except web.HTTPError as e:
            raise await failed(e.log_message or f"HTTP {e.status_code}") from None
        return resources.read_result(params.uri, content)

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        import mcp_types as types

        return types.ListToolsResult(tools=[tool.spec for tool in TOOLS])

    async def _get_task(self, ctx: Any, params: Any) -> dict[str, Any]:
        grants, caller = self._caller(ctx)
        if legacy_tasks.is_legacy(ctx):
            by = legacy_asking_as(grants, ctx)
            return legacy_tasks.task(await self._tasks.get(params.task_id, grants, caller, by))
        return await self._tasks.get(params.task_id, grants, caller, asking_as(grants, ctx))

    async def _task_result(self, ctx: Any, params: Any) -> dict[str, Any]:
        grants, caller = self._caller(ctx)
        by = legacy_asking_as(grants, ctx)
        pose = back_channel(ctx, self._log) if by is not None else None
        result = await self._tasks.result(params.task_id, grants, caller, by, pose)
        return legacy_tasks.with_related_task(result, params.task_id)

    async def _cancel_task(self, ctx: Any, params: Any) -> dict[str, Any]:
        grants, caller = self._caller(ctx)
        if legacy_tasks.is_legacy(ctx):
            cancelled = await self._tasks.cancel(
                params.task_id, grants, caller, ended_is_error=True
            )
            return legacy_tasks.task(cancelled)
        await self._tasks.cancel(params.task_id, grants, caller)
        return {"resultType": "complete"}

    async def _update_task(self, ctx: Any, params: Any) -> dict[str, Any]:
        grants, _ = self._caller(ctx)
        return await self._tasks.update(params.task_id, grants, params.input_responses)

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        grants, caller = self._caller(ctx)
        arguments = dict(params.arguments or {})
        path = arguments.get("path")

        async def failed(message: str) -> types.CallToolResult:
            # Every call is journaled: those the tool did not reach are journaled here.
            await self._agent.journal_call(path, params.name, caller, ok=False, receipt=message)
            return _error(message)

        tool = TOOLS_BY_NAME.get(params.name)
        if tool is None:
            return await failed(f"There is no tool named '{client_claim(params.name)}'.")
        refused = refusal(grants, tool.ability, params.name, path)
        if refused:
            return await failed(refused)
        arguments = given(arguments, tool.schema)  # a null optional: not given
        problem = schema_violation(arguments, tool.schema)
        if problem is not None:  # the one check of arguments: the schema the client is shown
            return await failed(f"{problem} See the input schema of {params.name}.")

        cursor = str(arguments.pop("cursor", ""))  # a read's page (``paging``)

        async def answer(caller: Caller, arguments: dict[str, Any]) -> types.CallToolResult:
            import mcp_types as types

            try:
                content = await tool.call(self._agent, caller, arguments, self._contents)
                if tool.hints.read_only:
                    content = paged(content, cursor, self._limits.result_tokens)
            except ToolFailed as e:  # the agent's toolbox journaled it
                return _error(str(e))
            except JupyterLoopError as e:
                return await failed(e.message)
            except web.HTTPError as e:  # the contents manager's own errors
                return await failed(e.log_message or f"HTTP {e.status_code}")
            return types.CallToolResult(content=content)

        return await self._routes.answer(
            CheckedCall(ctx, params, grants, caller, arguments, answer, failed)
        )


def _error(message: str) -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def _client_name(ctx: Any) -> str:
    """The client program's name for itself from MCP ``initialize`` (``clientInfo``),
    fit to show (``""``: it gave none)."""
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return client_claim(name) if name else ""
