"""The host matrix's columns for client libraries that only call tools: one set of checks
(:func:`columns`), run through each library's own objects, as a new user of it wires them.

Each library is a :data:`Opener`: given a token, a connected :class:`Session` whose three
methods go through the library's API (its tool objects, its result types), turned into a
:class:`Reply` only to be checked. A library without tasks (or without resources) says so
with ``None``, shown ``–``. Libraries here: openai-agents' MCP adapter, fastmcp's
``Client``, pydantic-ai's ``MCPToolset`` (its ``run`` column goes through an agent's loop,
the model being the scripted model server), langchain-mcp-adapters' tools, mcp-use's
``MCPClient``, and the MCP Inspector's CLI (``@modelcontextprotocol/inspector --cli``,
one process per call, when installed; ``inspector_cli``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol

from .host_matrix import MARKER, PATH, REFUSED, UNAUTHENTICATED, Cell, Row, Target, leaf_text

INSPECTOR = Path(
    os.environ.get(
        "JUPYTER_LOOP_INSPECTOR_CLI",
        Path(sys.prefix) / "inspector" / "node_modules" / "@modelcontextprotocol" / "inspector",
    )
)
"""Where ``npm install --prefix "$VIRTUAL_ENV/inspector" @modelcontextprotocol/inspector``
puts it (or ``$JUPYTER_LOOP_INSPECTOR_CLI``): bench-only, it is not in the repository's
``package.json``."""


@dataclass(frozen=True)
class Reply:
    """What a tool call gave, as the library handed it over."""

    text: str
    images: int
    links: tuple[str, ...]
    is_error: bool


class Session(Protocol):
    async def tools(self) -> list[str]: ...

    async def call(self, name: str, arguments: dict[str, Any]) -> Reply: ...

    async def read(self, uri: str) -> str | None: ...  # None: no resources in the library


Opener = Callable[[str], AbstractAsyncContextManager[Session]]


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"token {token}"} if token else {}


def from_content(content: list[Any], is_error: bool) -> Reply:
    """A reply from MCP content blocks (the SDK's objects, or dicts of them)."""

    def field(item: Any, name: str) -> Any:
        return item.get(name) if isinstance(item, dict) else getattr(item, name, None)

    kinds = [field(item, "type") for item in content]
    return Reply(
        "\n".join(
            str(field(i, "text")) for i, k in zip(content, kinds, strict=True) if k == "text"
        ),
        kinds.count("image"),
        tuple(
            str(field(i, "uri"))
            for i, k in zip(content, kinds, strict=True)
            if k == "resource_link"
        ),
        bool(is_error),
    )


async def _cell(check: Callable[[], Awaitable[tuple[bool | None, str]]]) -> Cell:
    try:
        ok, detail = await check()
        return Cell(ok, detail[:300])
    except BaseException as e:  # the column failed: its text is what the library shows
        if isinstance(e, KeyboardInterrupt | asyncio.CancelledError):
            raise
        return Cell(False, leaf_text(e)[:300])


async def columns(
    row: Row,
    open_session: Opener,
    target: Target,
    task: Callable[[], Awaitable[tuple[bool | None, str]]] | None = None,
    run: Callable[[], Awaitable[tuple[bool | None, str]]] | None = None,
) -> Row:
    """Every column through ``open_session``; ``run`` replaces the plain call (an agent's
    loop), ``task`` checks a task (``None``: the library has none)."""
    try:
        async with open_session(target.token) as session:
            row.cells["connect"] = Cell(True, "connected")

            async def call(name: str, **arguments: Any) -> Reply:
                return await session.call(name, {"path": PATH, **arguments})

            async def listed() -> tuple[bool, str]:
                names = await session.tools()
                return "run_cells" in names, f"{len(names)} tools"

            async def read_text() -> tuple[bool, str]:
                reply = await call("read_cell", cell_id="c0")
                return MARKER in reply.text, reply.text[:80]

            async def image() -> tuple[bool, str]:
                reply = await call("read_cell", cell_id="c1")
                return reply.images == 1, f"{reply.images} image"

            async def resource() -> tuple[bool | None, str]:
                reply = await call("get_outputs", cell_id="c2")
                if not reply.links:
                    return False, f"no resource link in: {reply.text[:100]}"
                text = await session.read(reply.links[0])
                if text is None:
                    return None, "the library reads no resources"
                return len(text) > 2000, f"{len(text)} characters"

            async def plain_run() -> tuple[bool, str]:
                reply = await call("run_cells", cell_ids=["c0"])
                return not reply.is_error and MARKER in reply.text, reply.text[:80]

            async def no_task() -> tuple[None, str]:
                return None, "the library has no tasks"

            async def propose() -> tuple[bool, str]:
                reply = await call("propose_insert", source="x = 1", summary="matrix")
                return "Proposal" in reply.text, reply.text[:80]

            checks = [
                ("list", listed), ("read text", read_text), ("image", image),
                ("resource", resource), ("run", run or plain_run), ("task", task or no_task),
                ("propose", propose),
            ]  # fmt: skip
            for name, check in checks:
                row.cells[name] = await _cell(check)
    except Exception as e:  # it could not connect: what it says
        row.cells["connect"] = Cell(False, leaf_text(e)[:300])
        return row

    async def refused() -> tuple[bool, str]:
        try:
            async with open_session(target.scoped_token) as scoped:
                reply = await scoped.call("run_cells", {"path": PATH, "cell_ids": ["c0"]})
                return reply.is_error and REFUSED in reply.text, reply.text
        except Exception as e:  # a library that raises a tool's error: its words
            text = leaf_text(e)
            return REFUSED in text, text

    async def unauthenticated() -> tuple[bool, str]:
        try:
            async with open_session("") as anonymous:
                await anonymous.tools()
                return False, "connected without a token"
        except BaseException as e:  # often an exception group from a task group
            text = leaf_text(e)
            return UNAUTHENTICATED in text, text

    row.cells["scope refusal"] = await _cell(refused)
    row.cells["error text"] = await _cell(unauthenticated)
    return row


def installed(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


# -- openai-agents ----------------------------------------------------------------------


async def openai_agents(target: Target) -> Row | None:
    """openai-agents' ``MCPServerStreamableHttp`` as its agents call tools. Its default
    5 s request time-out is raised, as a run waits longer (a user of it must do the same)."""
    if (found := installed("openai-agents")) is None:
        return None
    from agents.mcp import MCPServerStreamableHttp

    class AgentsSession:
        def __init__(self, server: Any) -> None:
            self.server = server

        async def tools(self) -> list[str]:
            return [t.name for t in await self.server.list_tools()]

        async def call(self, name: str, arguments: dict[str, Any]) -> Reply:
            result = await self.server.call_tool(name, arguments)
            return from_content(result.content, result.is_error)

        async def read(self, uri: str) -> str | None:
            [content] = (await self.server.read_resource(uri)).contents
            return str(getattr(content, "text", ""))

    @asynccontextmanager
    async def open_session(token: str) -> AsyncIterator[Session]:
        params: Any = {"url": target.url, "headers": headers(token)}
        async with MCPServerStreamableHttp(params, client_session_timeout_seconds=120) as server:
            yield AgentsSession(server)

    return await columns(Row("openai-agents", found), open_session, target)


# -- fastmcp ----------------------------------------------------------------------------


class FastmcpSession:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def tools(self) -> list[str]:
        return [t.name for t in await self.client.list_tools()]

    async def call(self, name: str, arguments: dict[str, Any]) -> Reply:
        result = await self.client.call_tool(name, arguments, raise_on_error=False)
        return from_content(result.content, result.is_error)

    async def read(self, uri: str) -> str | None:
        [content] = await self.client.read_resource(uri)
        return str(getattr(content, "text", ""))


async def fastmcp(target: Target) -> Row | None:
    """fastmcp's ``Client`` over its ``StreamableHttpTransport``. Its tasks come with the
    separate ``fastmcp-tasks`` package (not installed here)."""
    if (found := installed("fastmcp")) is None:
        return None
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    @asynccontextmanager
    async def open_session(token: str) -> AsyncIterator[Session]:
        transport = StreamableHttpTransport(target.url, headers=headers(token))
        async with Client(transport, timeout=120) as client:
            yield FastmcpSession(client)

    return await columns(Row("fastmcp (Client)", found), open_session, target)
