"""Model providers behind one small interface (:class:`ModelProvider`).

Shared by the assistant's turns and inline completions (hence beside ``agent/``, not in
it); nothing here knows which of them is calling.

Example:
    >>> provider = make_provider("ollama", host="http://127.0.0.1:11434", num_ctx=8192)
    >>> provider.name
    'ollama'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import BadRequest
from .base import (
    Capabilities,
    ChatMessage,
    ImagePart,
    ImagesRefused,
    ModelEvent,
    ModelInfo,
    ModelProvider,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallsReady,
    ToolSpec,
    Usage,
)
from .errors import BadToolArguments, ErrorKind, ProviderError
from .retry import RetryPolicy

if TYPE_CHECKING:
    from .ollama_provider import OllamaProvider
    from .openai_provider import OpenAIProvider

__all__ = [
    "PROVIDER_KINDS",
    "BadToolArguments",
    "Capabilities",
    "ChatMessage",
    "ErrorKind",
    "ImagePart",
    "ImagesRefused",
    "ModelEvent",
    "ModelInfo",
    "ModelProvider",
    "OllamaProvider",
    "OpenAIProvider",
    "ProviderError",
    "RetryPolicy",
    "StreamEnd",
    "TextDelta",
    "ToolCall",
    "ToolCallsReady",
    "ToolSpec",
    "Usage",
    "make_provider",
]

PROVIDER_KINDS = ("openai", "ollama")


def make_provider(kind: str, **settings: Any) -> ModelProvider:
    """Build the provider of the given kind.

    Args:
        kind: ``"openai"`` (OpenAI, or any OpenAI-compatible server given ``base_url``)
            or ``"ollama"`` (native Ollama API).
        **settings: The provider's constructor arguments (``api_key``, ``base_url``,
            ``timeout``, ... for OpenAI; ``host``, ``num_ctx``, ``timeout``, ... for Ollama).

    Raises:
        BadRequest: ``kind`` is not one of :data:`PROVIDER_KINDS`.
    """
    if kind == "openai":
        from .openai_provider import OpenAIProvider

        return OpenAIProvider(**settings)
    if kind == "ollama":
        from .ollama_provider import OllamaProvider

        return OllamaProvider(**settings)
    known = ", ".join(repr(k) for k in PROVIDER_KINDS)
    raise BadRequest(f"Unknown model provider {kind!r}; expected one of {known}.")


def __getattr__(name: str) -> Any:
    # The client libraries (``openai`` alone takes most of a second) load when a provider
    # is first needed, not when the server starts.
    if name == "OpenAIProvider":
        from .openai_provider import OpenAIProvider

        return OpenAIProvider
    if name == "OllamaProvider":
        from .ollama_provider import OllamaProvider

        return OllamaProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
