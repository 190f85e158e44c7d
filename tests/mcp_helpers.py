"""Helpers for MCP tests: call a tool, read the text it gave back."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def call(session: ClientSession, name: str, **arguments: Any) -> types.CallToolResult:
    return await session.call_tool(name, arguments)
