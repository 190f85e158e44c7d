"""The fixture plugin of the tests: what tests in more than one folder use, registered once.

``tests/conftest.py`` registers it (``pytest_plugins``) for every test, so a test just names
a fixture. Each starts with ``loop_``, so a test's parameters tell ours from pytest's and
pytest-jupyter's (``jp_*``): the MCP endpoint and an SDK client session on it
(``loop_mcp_url``, ``loop_mcp_session``), the scripted model server and real providers
pointed at it (``loop_model_server``, ``loop_make_openai_provider``, ...), server processes
of a test's own (``loop_serve``). Set-up that only one folder's tests use lives in that
folder's ``conftest.py`` instead.

Every test runs behind a JupyterHub-style base URL (``jp_base_url``): that was already what
a whole run did (a plugin registered by one test module applied to every test after it),
and one rule for a file run alone and for the whole suite keeps a test from passing only
one way.

Providers are built by factories so a test can change a setting
(``max_rate_limit_retries=0``); every provider built is closed when the test ends, and the
model server is stopped. Test modules also import its helpers (``TEST_API_KEY``,
``collect``), possibly before pytest loads it as a plugin; it has no asserts to rewrite,
hence: PYTEST_DONT_REWRITE.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from jupyter_loop.providers import ModelProvider, OllamaProvider, OpenAIProvider
from jupyter_loop.testing import ScriptedModelServer
from jupyter_loop.testing.server_process import ServerProcess

Serve = Callable[..., ServerProcess]


@pytest.fixture
def jp_base_url() -> str:
    """A JupyterHub-style base URL: every request goes under /user/NAME/."""
    return "/user/ada/"


@pytest.fixture
def loop_mcp_url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    return f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/jupyter-loop/mcp"


@pytest.fixture
def loop_mcp_session(loop_mcp_url: str, jp_auth_header: Any) -> Callable[..., Any]:
    """``async with loop_mcp_session() as session``: an initialized SDK client session."""

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
            streamable_http_client(loop_mcp_url, http_client=http) as (read, write),
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


#: The API key the providers under test use: never to appear in an error message.
TEST_API_KEY = "sk-loop-test-5f3c9a7e1d2b4c6a"

#: Fast settings for tests: short timeouts and retry waits of milliseconds.
FAST = {"timeout": 5.0, "max_retry_wait": 1.0, "retry_default_wait": 0.01}


@pytest.fixture
def loop_model_server() -> Iterator[ScriptedModelServer]:
    """A scripted model server on 127.0.0.1, stopped when the test ends."""
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def _close_providers(jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[list[ModelProvider]]:
    made: list[ModelProvider] = []
    yield made
    for provider in made:
        jp_asyncio_loop.run_until_complete(provider.aclose())
    # A stream stopped early leaves the ollama client's inner HTTP iterators to be closed
    # by tasks the loop has yet to run: let them run while the loop is open.
    jp_asyncio_loop.run_until_complete(asyncio.sleep(0))


@pytest.fixture
def loop_make_openai_provider(
    loop_model_server: ScriptedModelServer, _close_providers: list[ModelProvider]
) -> Callable[..., OpenAIProvider]:
    """``loop_make_openai_provider(**settings)``: an OpenAI provider talking to the server."""

    def make(**settings: Any) -> OpenAIProvider:
        values: dict[str, Any] = {
            "api_key": TEST_API_KEY,
            "base_url": loop_model_server.openai_base_url,
            **FAST,
            **settings,
        }
        provider = OpenAIProvider(**values)
        _close_providers.append(provider)
        return provider

    return make


@pytest.fixture
def loop_make_ollama_provider(
    loop_model_server: ScriptedModelServer, _close_providers: list[ModelProvider]
) -> Callable[..., OllamaProvider]:
    """``loop_make_ollama_provider(**settings)``: an Ollama provider talking to the server."""

    def make(**settings: Any) -> OllamaProvider:
        values: dict[str, Any] = {"host": loop_model_server.ollama_host, **FAST, **settings}
        provider = OllamaProvider(**values)
        _close_providers.append(provider)
        return provider

    return make


@pytest.fixture
def loop_openai_provider(
    loop_make_openai_provider: Callable[..., OpenAIProvider],
) -> OpenAIProvider:
    """An OpenAI provider talking to the scripted server, with :data:`TEST_API_KEY`."""
    return loop_make_openai_provider()


@pytest.fixture
def loop_ollama_provider(
    loop_make_ollama_provider: Callable[..., OllamaProvider],
) -> OllamaProvider:
    """An Ollama provider talking to the scripted server."""
    return loop_make_ollama_provider()


async def collect(events: Any) -> list[Any]:
    """Every event of a provider's stream, in order."""
    return [event async for event in events]


@pytest.fixture
def loop_serve(tmp_path: Path) -> Iterator[Serve]:
    """``loop_serve(*options)``: server processes on one home; whatever a test leaves running (a
    server, a kept kernel, its keeper) goes with it, also when it fails."""
    made: list[ServerProcess] = []

    def make(*options: str) -> ServerProcess:
        made.append(ServerProcess(tmp_path, *options))
        return made[-1]

    yield make
    for server in made:
        server.kill()
