"""Fixtures: the scripted model server, and real providers pointed at it.

Register with ``pytest_plugins = ["model_fixtures"]``. Providers are built by factories so
a test can change a setting (``max_rate_limit_retries=0``); every provider built is closed
when the test ends, and the server is stopped.

Test modules may also import its helpers (``TEST_API_KEY``, ``collect``), possibly before
pytest loads it as a plugin; it has no asserts to rewrite, hence: PYTEST_DONT_REWRITE.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from jupyter_loop.providers import ModelProvider, OllamaProvider, OpenAIProvider
from jupyter_loop.testing import ScriptedModelServer

#: The API key the providers under test use: never to appear in an error message.
TEST_API_KEY = "sk-loop-test-5f3c9a7e1d2b4c6a"

#: Fast settings for tests: short timeouts and retry waits of milliseconds.
FAST = {"timeout": 5.0, "max_retry_wait": 1.0, "retry_default_wait": 0.01}


@pytest.fixture
def model_server() -> Iterator[ScriptedModelServer]:
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
def make_openai_provider(
    model_server: ScriptedModelServer, _close_providers: list[ModelProvider]
) -> Callable[..., OpenAIProvider]:
    """``make_openai_provider(**settings)``: an OpenAI provider talking to the server."""

    def make(**settings: Any) -> OpenAIProvider:
        values: dict[str, Any] = {
            "api_key": TEST_API_KEY,
            "base_url": model_server.openai_base_url,
            **FAST,
            **settings,
        }
        provider = OpenAIProvider(**values)
        _close_providers.append(provider)
        return provider

    return make


@pytest.fixture
def make_ollama_provider(
    model_server: ScriptedModelServer, _close_providers: list[ModelProvider]
) -> Callable[..., OllamaProvider]:
    """``make_ollama_provider(**settings)``: an Ollama provider talking to the server."""

    def make(**settings: Any) -> OllamaProvider:
        values: dict[str, Any] = {"host": model_server.ollama_host, **FAST, **settings}
        provider = OllamaProvider(**values)
        _close_providers.append(provider)
        return provider

    return make


@pytest.fixture
def openai_provider(make_openai_provider: Callable[..., OpenAIProvider]) -> OpenAIProvider:
    """An OpenAI provider talking to the scripted server, with :data:`TEST_API_KEY`."""
    return make_openai_provider()


@pytest.fixture
def ollama_provider(make_ollama_provider: Callable[..., OllamaProvider]) -> OllamaProvider:
    """An Ollama provider talking to the scripted server."""
    return make_ollama_provider()


async def collect(events: Any) -> list[Any]:
    """Every event of a provider's stream, in order."""
    return [event async for event in events]
