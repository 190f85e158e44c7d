"""The MCP endpoint, driven by the MCP SDK's own Streamable HTTP client against a real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from conftest import wait_for
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pycrdt import Map

CANARY = "canary-7f3c9e21d4b8a6f0"


@pytest.fixture
def jp_base_url() -> str:
    """A JupyterHub-style base URL: every request goes under /user/NAME/."""
    return "/user/ada/"


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"secrets": [CANARY], "external_approval_timeout": 60.0}


@pytest.fixture
def mcp_url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    return f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/jupyter-loop/mcp"


@pytest.fixture
def mcp_session(mcp_url: str, jp_auth_header: Any) -> Callable[..., Any]:
    """``async with mcp_session() as session``: an initialized SDK client session."""

    @asynccontextmanager
    async def connect(
        headers: dict[str, str] | None = None, name: str = "test-agent"
    ) -> AsyncIterator[ClientSession]:
        chosen = dict(jp_auth_header) if headers is None else headers
        async with (
            httpx2.AsyncClient(headers=chosen, timeout=120) as http,
            streamable_http_client(mcp_url, http_client=http) as (read, write),
            ClientSession(read, write, client_info=types.Implementation(name=name, version="1")) as session,
        ):
            await session.initialize()
            yield session

    return connect


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_lists_the_tools(mcp_session: Any) -> None:
    async with mcp_session() as session:
        listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    assert {
        "list_notebooks",
        "read_notebook",
        "read_cell",
        "propose_modify",
        "propose_insert",
        "propose_delete",
        "proposal_status",
        "run_cells",
        "get_outputs",
        "interrupt",
    } <= names
    run = next(tool for tool in listed.tools if tool.name == "run_cells")
    assert run.input_schema["required"][0] == "path"
