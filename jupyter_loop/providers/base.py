"""The one small interface every model provider speaks, and the values that cross it.

The caller (an agent turn, an inline completion) builds :class:`ChatMessage` values and
:class:`ToolSpec` values, calls :meth:`ModelProvider.stream`, and reads :data:`ModelEvent`
values back: text as it arrives, then the complete tool calls, the token usage and the
reason the model stopped. Providers translate to and from their wire formats; nothing
provider-specific leaks out.

Example:
    >>> call = ToolCall(id="call_0", name="read_cell", arguments_json='{"cell_id": "c1"}')
    >>> call.arguments()
    {'cell_id': 'c1'}
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .errors import BadToolArguments, ProviderError

__all__ = [
    "BadToolArguments",
    "Capabilities",
    "ChatMessage",
    "ImagePart",
    "ImagesRefused",
    "ModelEvent",
    "ModelInfo",
    "ModelProvider",
    "ProviderError",
    "StreamEnd",
    "TextDelta",
    "ToolCall",
    "ToolCallsReady",
    "ToolSpec",
    "Usage",
]


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call.

    Attributes:
        name: The tool's name, as the model will call it.
        description: What the tool does, for the model.
        parameters: A JSON schema (``{"type": "object", "properties": {...}}``).
    """

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model made, complete.

    Attributes:
        id: The call's id (providers without ids get stable ``call_0``, ``call_1``, ...).
        name: The tool called.
        arguments_json: The arguments as the model sent them: JSON text, not yet trusted.
    """

    id: str
    name: str
    arguments_json: str

    def arguments(self) -> dict[str, Any]:
        """The arguments as a dict; an empty text counts as no arguments.

        Raises:
            BadToolArguments: The text is not JSON, or is JSON but not an object.
        """
        if not self.arguments_json.strip():
            return {}
        try:
            value = json.loads(self.arguments_json)
        except ValueError as e:
            raise BadToolArguments(self.name, self.arguments_json, f"invalid JSON: {e}") from None
        if not isinstance(value, dict):
            kind = type(value).__name__
            raise BadToolArguments(self.name, self.arguments_json, f"got a JSON {kind}")
        return value


@dataclass(frozen=True)
class ImagePart:
    """An image for models that take images.

    Attributes:
        mime_type: ``"image/png"`` or ``"image/jpeg"``.
        data: The image bytes, base64-encoded.
    """

    mime_type: str
    data: str

    def data_url(self) -> str:
        """The image as a ``data:`` URL."""
        return f"data:{self.mime_type};base64,{self.data}"


@dataclass(frozen=True)
class ChatMessage:
    """One message of the conversation sent to the model.

    Attributes:
        role: ``"system"``, ``"user"``, ``"assistant"`` or ``"tool"``.
        content: The message text.
        tool_calls: For an assistant message: the tool calls it made.
        tool_call_id: For a tool message: the id of the call it answers.
        tool_name: For a tool message: the tool that ran (Ollama matches results by name).
        images: Images for models that take them.
    """

    role: str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    images: tuple[ImagePart, ...] = ()


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer's text, as it streams."""

    text: str


@dataclass(frozen=True)
class ToolCallsReady:
    """The tool calls of this step, complete, once the stream has assembled them."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class Usage:
    """Tokens the step used, as the server counted them."""

    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class StreamEnd:
    """The step is over.

    Attributes:
        finish_reason: ``"stop"``, ``"tool_calls"``, ``"length"``, or the server's own word.
    """

    finish_reason: str


@dataclass(frozen=True)
class ImagesRefused:
    """The model refused the step's images; the step was sent again without them.

    Attributes:
        message: What the server said.
    """

    message: str


ModelEvent = TextDelta | ToolCallsReady | Usage | StreamEnd | ImagesRefused


@dataclass(frozen=True)
class ModelInfo:
    """A model a provider offers."""

    id: str
    provider: str


@dataclass(frozen=True)
class Capabilities:
    """What a model can do.

    Attributes:
        tools: Whether it takes tools.
        images: Whether it takes images.
        context_window: Tokens it reads at most, if known.
    """

    tools: bool
    images: bool
    context_window: int | None


@runtime_checkable
class ModelProvider(Protocol):
    """A source of model answers: OpenAI (or compatible), Ollama, or a test's own."""

    name: str

    def stream(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        options: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[ModelEvent]:
        """Run one model step and stream what it says.

        Yields, first, :class:`ImagesRefused` if the model refused the images and the step
        went again without them; then text deltas as they arrive, at most one
        :class:`ToolCallsReady`, at most one :class:`Usage` and always a final
        :class:`StreamEnd`. Closing the
        iterator early (``aclose()``) stops the request.

        Raises:
            ProviderError: The step failed; ``kind`` says how.
        """
        ...

    async def models(self) -> list[ModelInfo]:
        """The models the provider offers."""
        ...

    async def capabilities(self, model: str) -> Capabilities:
        """What ``model`` can do (tools, images, context window)."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def function_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs in the ``function`` format OpenAI and Ollama share."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]
