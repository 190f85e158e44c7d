"""MCP test fixtures: the endpoint's URL and an SDK client session on it.

Register with ``pytest_plugins = ["mcp_fixtures"]``. Test modules may be imported before
pytest loads it as a plugin (the doctest collector imports every module); it has no asserts
to rewrite, hence: PYTEST_DONT_REWRITE.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


@pytest.fixture
def jp_base_url() -> str:
    """A JupyterHub-style base URL: every request goes under /user/NAME/."""
    return "/user/ada/"


@pytest.fixture
def mcp_url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    return f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/jupyter-loop/mcp"


@pytest.fixture
def mcp_session(mcp_url: str, jp_auth_header: Any) -> Callable[..., Any]:
    """``async with mcp_session() as session``: an initialized SDK client session."""

    @asynccontextmanager
    async def connect(
        headers: dict[str, str] | None = None,
        name: str = "test-agent",
        modern: bool = False,
        session_ids: list[str] | None = None,
        elicitation: Any = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        result_claims: Any = None,
    ) -> AsyncIterator[ClientSession]:
        """``modern``: the 2026 protocol (no handshake, no server session: ``discover``);
        ``session_ids`` collects the ``mcp-session-id`` the server answers with;
        ``elicitation``: the client's form callback (it then says it can show forms);
        ``extensions`` and ``result_claims``: the SDK's own, for an extension it speaks."""
        chosen = dict(jp_auth_header) if headers is None else headers

        async def seen(response: Any) -> None:
            minted = response.headers.get("mcp-session-id")
            if session_ids is not None and minted and minted not in session_ids:
                session_ids.append(minted)

        hooks = {"response": [seen]}
        async with (
            httpx2.AsyncClient(headers=chosen, timeout=120, event_hooks=hooks) as http,
            streamable_http_client(mcp_url, http_client=http) as (read, write),
            ClientSession(
                read,
                write,
                client_info=types.Implementation(name=name, version="1"),
                elicitation_callback=elicitation,
                extensions=extensions,
                result_claims=result_claims,
            ) as session,
        ):
            await (session.discover() if modern else session.initialize())
            yield session

    return connect
