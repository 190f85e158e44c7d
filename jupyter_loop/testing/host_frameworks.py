"""The host matrix's agent frameworks and tools that only call tools, each through its own
objects (``host_libraries.columns`` runs the checks): pydantic-ai (its ``run`` column is an
agent's loop whose model is the scripted model server), langchain-mcp-adapters' LangChain
tools, mcp-use's ``MCPClient`` and the MCP Inspector CLI. :data:`FRAMEWORKS` lists every
library the matrix tries after the official SDKs; a library not installed is left out.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from .host_libraries import (
    INSPECTOR,
    Reply,
    Session,
    columns,
    fastmcp,
    from_content,
    headers,
    installed,
    openai_agents,
)
from .host_matrix import MARKER, PATH, Cell, Row, Target

# -- pydantic-ai ------------------------------------------------------------------------


URI_SCHEME = "jupyter-loop://"


def _texty(part: Any) -> bool:
    return isinstance(part, dict) or isinstance(part, str) and not part.startswith(URI_SCHEME)


def unusable(row: Row, error: Exception) -> Row:
    """A library that cannot even be imported beside this SDK: its connect is ✘, saying why."""
    row.cells["connect"] = Cell(False, f"{type(error).__name__}: {error}"[:300])
    return row


OTHER_PYTHON = Path(
    os.environ.get("JUPYTER_LOOP_MCP1_PYTHON", Path(sys.prefix) / "mcp1-env" / "bin" / "python")
)
"""A Python whose environment has the MCP SDK 1.x, for the libraries that require
``mcp<2`` (langchain-mcp-adapters, mcp-use) and cannot be installed beside the SDK 2.x:
``python -m venv "$VIRTUAL_ENV/mcp1-env"`` then its ``pip install "mcp<2"
langchain-mcp-adapters mcp-use`` (bench-only)."""
ELSEWHERE = "JUPYTER_LOOP_HOST_ELSEWHERE"


async def elsewhere(name: str, target: Target, row: Row, error: Exception) -> Row:
    """The library's row, run by :data:`OTHER_PYTHON` (``python -m`` this module), when it
    cannot be imported here; ✘ saying why when there is no such Python."""
    if not OTHER_PYTHON.exists() or os.environ.get(ELSEWHERE):
        return unusable(row, error)
    repo = Path(__file__).resolve().parents[2]
    process = await asyncio.create_subprocess_exec(
        str(OTHER_PYTHON), "-m", "jupyter_loop.testing.host_frameworks", name,
        json.dumps(dataclasses.asdict(target)),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(repo), ELSEWHERE: "1"},
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 900)
    try:
        found = json.loads(out.decode().strip().splitlines()[-1])
    except (IndexError, ValueError):
        return unusable(row, RuntimeError(err.decode(errors="replace")[-300:]))
    made = Row(f"{found['library']} (beside mcp {found['mcp']})", found["version"])
    for column, cell in found["cells"].items():
        made.cells[column] = Cell(cell["ok"], cell["detail"])
    return made


class PydanticSession:
    """``MCPToolset``'s own calls: ``direct_call_tool`` gives what an agent's tool gives
    (text, ``BinaryContent`` images, a resource link's URI); a tool's error is raised."""

    def __init__(self, toolset: Any) -> None:
        self.toolset = toolset

    async def tools(self) -> list[str]:
        return [t.name for t in await self.toolset.list_tools()]

    async def call(self, name: str, arguments: dict[str, Any]) -> Reply:
        from pydantic_ai.messages import BinaryContent

        found = await self.toolset.direct_call_tool(name, arguments)
        parts = found if isinstance(found, list) else [found]
        # it hands a resource link over as its bare URI (a string among the texts)
        links = tuple(p for p in parts if isinstance(p, str) and p.startswith(URI_SCHEME))
        texts = [p if isinstance(p, str) else json.dumps(p) for p in parts if _texty(p)]
        images = sum(isinstance(p, BinaryContent) and p.is_image for p in parts)
        return Reply("\n".join(texts), images, links, False)

    async def read(self, uri: str) -> str | None:
        found = await self.toolset.read_resource(uri)
        return found if isinstance(found, str) else str(found)


async def pydantic_ai(target: Target) -> Row | None:
    if (found := installed("pydantic-ai-slim")) is None:
        return None
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from .model_server import ScriptedModelServer
    from .replies import call_tools, say

    def toolset(token: str) -> Any:
        return MCPToolset(target.url, headers=headers(token), read_timeout=120)

    @asynccontextmanager
    async def open_session(token: str) -> AsyncIterator[Session]:
        async with toolset(token) as connected:
            yield PydanticSession(connected)

    async def agent_run() -> tuple[bool, str]:
        """An agent whose model asks for run_cells: the tool's answer reaches the model."""
        with ScriptedModelServer() as model_server:
            arguments = {"path": PATH, "cell_ids": ["c0"]}
            model_server.script(call_tools(("run_cells", arguments)), say("It ran."))
            provider = OpenAIProvider(base_url=model_server.openai_base_url, api_key="none")
            agent = Agent(
                OpenAIChatModel("scripted", provider=provider), toolsets=[toolset(target.token)]
            )
            result = await agent.run("Run cell c0 of matrix.ipynb.")
            sent = json.dumps(model_server.bodies("/v1/chat/completions")[-1]["messages"])
        return (
            MARKER in sent and result.output == "It ran.",
            f"the agent answered {result.output!r}",
        )

    return await columns(
        Row("pydantic-ai (MCPToolset)", found), open_session, target, run=agent_run
    )


# -- langchain-mcp-adapters -------------------------------------------------------------


def _langchain_reply(message: Any) -> Reply:
    content = message.content if isinstance(message.content, list) else [message.content]
    blocks = [{"type": "text", "text": b} if isinstance(b, str) else b for b in content]
    return Reply(
        "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text"),
        sum(b.get("type") == "image" and "base64" in b for b in blocks),
        tuple(str(b["url"]) for b in blocks if b.get("type") in ("file", "image") and "url" in b),
        getattr(message, "status", "success") == "error",
    )


async def langchain(target: Target) -> Row | None:
    """``MultiServerMCPClient``'s LangChain tools, invoked as an agent invokes them (a tool
    call, answered with a ``ToolMessage``); resources through its ``get_resources``."""
    if (found := installed("langchain-mcp-adapters")) is None:
        return None
    row = Row("langchain-mcp-adapters", found)
    try:
        from langchain_mcp_adapters.client import MultiServerMCPClient
    except ImportError as e:
        return await elsewhere("langchain", target, row, e)

    class LangchainSession:
        def __init__(self, client: Any) -> None:
            self.client = client
            self.by_name: dict[str, Any] = {}

        async def tools(self) -> list[str]:
            self.by_name = {t.name: t for t in await self.client.get_tools()}
            return list(self.by_name)

        async def call(self, name: str, arguments: dict[str, Any]) -> Reply:
            tool = (
                self.by_name.get(name) or {t.name: t for t in await self.client.get_tools()}[name]
            )
            call = {"type": "tool_call", "id": "call-1", "name": name, "args": arguments}
            return _langchain_reply(await tool.ainvoke(call))

        async def read(self, uri: str) -> str | None:
            [blob] = await self.client.get_resources("jupyter", uris=[uri])
            return str(blob.as_string())

    @asynccontextmanager
    async def open_session(token: str) -> AsyncIterator[Session]:
        config: Any = {"transport": "streamable_http", "url": target.url, "headers": headers(token)}
        session = LangchainSession(MultiServerMCPClient({"jupyter": config}))
        await session.tools()  # it connects per call: the first list is the connection
        yield session

    return await columns(row, open_session, target)


# -- mcp-use ----------------------------------------------------------------------------


async def mcp_use(target: Target) -> Row | None:
    """mcp-use's ``MCPClient`` from a config dict (the form its docs give), a session per
    server; its telemetry is switched off by its own variable."""
    if (found := installed("mcp-use")) is None:
        return None
    import os

    os.environ.setdefault("MCP_USE_ANONYMIZED_TELEMETRY", "false")
    row = Row("mcp-use (MCPClient)", found)
    try:
        from mcp_use import MCPClient
    except ImportError as e:
        return await elsewhere("mcp_use", target, row, e)

    class UseSession:
        def __init__(self, session: Any) -> None:
            self.session = session

        async def tools(self) -> list[str]:
            return [t.name for t in await self.session.list_tools()]

        async def call(self, name: str, arguments: dict[str, Any]) -> Reply:
            result = await self.session.call_tool(name, arguments)
            return from_content(result.content, getattr(result, "isError", False))

        async def read(self, uri: str) -> str | None:
            from pydantic import AnyUrl

            [content] = (await self.session.read_resource(AnyUrl(uri))).contents
            return str(getattr(content, "text", ""))

    @asynccontextmanager
    async def open_session(token: str) -> AsyncIterator[Session]:
        server = {"url": target.url, "headers": headers(token)}
        client = MCPClient.from_dict({"mcpServers": {"jupyter": server}})
        try:
            session = await client.create_session("jupyter")
            yield UseSession(session)
        finally:
            await client.close_all_sessions()

    return await columns(row, open_session, target)


# -- the MCP Inspector CLI --------------------------------------------------------------


async def inspector_cli(target: Target) -> Row | None:
    """``mcp-inspector --cli URL --method …`` (``@modelcontextprotocol/inspector``), one
    process per call, its JSON on stdout; a refusal is its exit status and stderr. Run
    without a terminal, as in CI, it needs ``--stored-auth-only`` (its own advice): else a
    401 that names an authorization server starts its interactive OAuth. Its catalog of
    servers goes to a temporary file, not the user's home."""
    entry = INSPECTOR / "clients" / "launcher" / "build" / "index.js"
    if shutil.which("node") is None or not entry.exists():
        return None
    found = json.loads((INSPECTOR / "package.json").read_text("utf-8"))["version"]
    catalog = Path(tempfile.mkdtemp(prefix="inspector-"))

    async def cli(token: str, *args: str) -> Any:
        header = [f"--header=Authorization: token {token}"] if token else []
        process = await asyncio.create_subprocess_exec(
            "node", str(entry), "--cli", target.url, "--transport", "http", "--stored-auth-only",
            *header, *args, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "MCP_CATALOG_PATH": str(catalog / "mcp.json")},
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), 180)
        if process.returncode != 0 and not out.strip():
            raise RuntimeError((err or out).decode(errors="replace").strip())
        return json.loads(out)  # a tool's error: the result on stdout, exit status 5

    class InspectorSession:
        def __init__(self, token: str) -> None:
            self.token = token

        async def tools(self) -> list[str]:
            return [t["name"] for t in (await cli(self.token, "--method", "tools/list"))["tools"]]

        async def call(self, name: str, arguments: dict[str, Any]) -> Reply:
            pairs = [
                f"{key}={value if isinstance(value, str) else json.dumps(value)}"
                for key, value in arguments.items()
            ]
            args = ["--method", "tools/call", "--tool-name", name, "--tool-arg", *pairs]
            result = await cli(self.token, *args)
            return from_content(result.get("content", []), result.get("isError", False))

        async def read(self, uri: str) -> str | None:
            result = await cli(self.token, "--method", "resources/read", "--uri", uri)
            return str(result["contents"][0].get("text", ""))

    @asynccontextmanager
    async def open_session(token: str) -> AsyncIterator[Session]:
        session = InspectorSession(token)
        await session.tools()  # each call connects: the first list is the connection
        yield session

    try:
        return await columns(Row("MCP Inspector (--cli)", found), open_session, target)
    finally:
        shutil.rmtree(catalog, ignore_errors=True)


FRAMEWORKS: tuple[Callable[[Target], Awaitable[Row | None]], ...] = (
    openai_agents, fastmcp, pydantic_ai, langchain, mcp_use, inspector_cli,
)  # fmt: skip
"""Every library the matrix tries after the official SDKs, in its table's order."""


def main(argv: list[str]) -> None:
    """``python -m jupyter_loop.testing.host_frameworks NAME TARGET_JSON``: one library's row
    as JSON (how :func:`elsewhere` runs it in another environment)."""
    name, target = argv
    by_name = {library.__name__: library for library in FRAMEWORKS}
    library = by_name[name]

    async def made() -> Row | None:
        return await library(Target(**json.loads(target)))

    row = asyncio.run(made())
    if row is None:
        raise SystemExit(f"{name} is not installed")
    cells = {column: dataclasses.asdict(cell) for column, cell in row.cells.items()}
    found = {"library": row.library, "version": row.version, "mcp": installed("mcp")}
    print(json.dumps({**found, "cells": cells}))


if __name__ == "__main__":
    main(sys.argv[1:])
