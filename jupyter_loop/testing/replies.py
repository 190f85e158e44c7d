"""What the scripted model server answers: scripted replies and the models it offers.

A :class:`Reply` is one answer to one request: text (streamed in small chunks), tool calls
(arguments streamed in pieces), token usage, or a failure (an HTTP status with headers, a
stream cut off midway, tool arguments that are not JSON). Replies also travel as JSON
(``POST /_script``) so browser tests can script the server too.

Example:
    >>> say("Hello").text
    'Hello'
    >>> Reply.from_json({"tool_calls": [{"name": "run", "arguments": {"ids": ["c1"]}}]}).tool_calls
    (ScriptedCall(name='run', arguments={'ids': ['c1']}, id=None),)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

ENDPOINTS = ("chat", "models", "show")


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call the scripted model makes.

    Attributes:
        name: The tool called.
        arguments: An object, or text sent as is (text that is not JSON makes malformed
            arguments).
        id: The call id on the OpenAI side (default: generated); Ollama sends none.
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        """The arguments as the OpenAI wire carries them: JSON text."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False)


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    Attributes:
        text: The answer's text, streamed ``chunk_size`` characters at a time.
        tool_calls: Tool calls, after the text.
        usage: ``(input_tokens, output_tokens)``; None: estimated from the request.
        finish_reason: The finish reason; None: ``"tool_calls"`` or ``"stop"``; ``""``:
            send none at all (a stream that ends without one).
        status: The HTTP status; 400 and above answer with an error body instead.
        error: The error message of a failure.
        headers: Extra response headers (``{"Retry-After": "1"}``).
        cut_after: Close the connection after this many stream events (None: never).
        chunk_size: Characters per text or arguments chunk.
        delay: Seconds to wait before each stream event.
        endpoint: Which requests take this reply: ``"chat"`` (chat completions,
            responses, ``/api/chat`` and ``/api/generate``), ``"models"`` (``/v1/models``,
            ``/api/tags``) or ``"show"``.
        requires: Taken only by a request whose body contains this text (``""``: any), so
            a test can script an answer that depends on what the model was sent.
        answer_after_tool: Answer this text instead when the request holds a ``tool``
            message (its call was answered), as a model trained on the native tool protocol
            does once it sees its call's result (None: always answer as scripted).
    """

    text: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    usage: tuple[int, int] | None = None
    finish_reason: str | None = None
    status: int = 200
    error: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    chunk_size: int = 4
    delay: float = 0.0
    endpoint: str = "chat"
    requires: str = ""
    answer_after_tool: str | None = None

    def __post_init__(self) -> None:
        if self.endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {ENDPOINTS}, not {self.endpoint!r}")
        if self.chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")

    def for_messages(self, messages: Any) -> Reply:
        """This reply, or its :attr:`answer_after_tool` text once a tool message is sent.

        Example:
            >>> reply = Reply(tool_calls=(ScriptedCall("f"),), answer_after_tool="Done.")
            >>> reply.for_messages([{"role": "tool", "content": "ok"}, {"role": "user"}]).text
            'Done.'
            >>> len(reply.for_messages([{"role": "user", "content": "go"}]).tool_calls)
            1
        """
        if not isinstance(messages, list):
            return self
        return self.after_tool(
            any(isinstance(m, Mapping) and m.get("role") == "tool" for m in messages)
        )

    def after_tool(self, answered: bool) -> Reply:
        """This reply, or its :attr:`answer_after_tool` text if a call was ``answered``
        (a ``tool`` message, a Responses ``function_call_output`` item)."""
        if self.answer_after_tool is None or not answered:
            return self
        return Reply(text=self.answer_after_tool)

    @property
    def failed(self) -> bool:
        """Whether this reply is an HTTP error."""
        return self.status >= 400

    @property
    def resolved_finish_reason(self) -> str:
        """The finish reason to send (``""``: none)."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"

    def pieces(self, text: str) -> list[str]:
        """``text`` in ``chunk_size`` pieces."""
        size = self.chunk_size
        return [text[i : i + size] for i in range(0, len(text), size)]

    def to_json(self) -> dict[str, Any]:
        """The reply as the JSON ``POST /_script`` takes."""
        data = asdict(self)
        data["tool_calls"] = [asdict(call) for call in self.tool_calls]
        data["headers"] = dict(self.headers)
        data["usage"] = list(self.usage) if self.usage else None
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reply:
        """Read a reply from JSON; unknown keys are an error (a typo should not pass).

        Raises:
            ValueError: A key is unknown or a value has the wrong shape.
        """
        if not isinstance(data, Mapping):
            raise ValueError("A scripted reply must be a JSON object.")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"Unknown reply keys: {', '.join(unknown)}")
        values = dict(data)
        values["tool_calls"] = tuple(_call(item) for item in values.get("tool_calls") or ())
        values["usage"] = _usage(values.get("usage"))
        values["headers"] = {str(k): str(v) for k, v in (values.get("headers") or {}).items()}
        try:
            return cls(**values)
        except TypeError as e:
            raise ValueError(str(e)) from None


def _call(item: Any) -> ScriptedCall:
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        raise ValueError("Each tool call needs a 'name'.")
    arguments = item.get("arguments", {})
    if not isinstance(arguments, (Mapping, str)):
        raise ValueError("Tool call 'arguments' must be an object or a string.")
    return ScriptedCall(name=item["name"], arguments=arguments, id=item.get("id"))


def _usage(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return int(value["input_tokens"]), int(value["output_tokens"])
    first, second = value
    return int(first), int(second)


@dataclass(frozen=True)
class ScriptedModel:
    """A model the server lists, with what ``/api/show`` says about it.

    Attributes:
        name: The model's name (``/api/tags``, ``/v1/models``).
        capabilities: Ollama's capability list; None: omit it (older Ollama). A chat
            request with tools to a model whose list lacks ``"tools"`` is refused (400),
            as Ollama does; so is fill-in-the-middle (a ``suffix``) without ``"insert"``, and
            a request with images to a model whose list lacks ``"vision"``, as text-only
            OpenAI-compatible servers do.
        context_length: The trained context length in ``model_info``.
        template: The prompt template (older Ollama's only hint of tool support).
        family: The architecture name.
    """

    name: str
    capabilities: tuple[str, ...] | None = ("completion", "tools")
    context_length: int = 32768
    template: str = "{{ .System }}{{ .Prompt }}"
    family: str = "llama"

    def refuses_tools(self) -> bool:
        """Whether a request with tools gets "does not support tools"."""
        return self.capabilities is not None and "tools" not in self.capabilities

    def refuses_insert(self) -> bool:
        """Whether ``/api/generate`` with a ``suffix`` gets "does not support insert"."""
        return self.capabilities is not None and "insert" not in self.capabilities

    def refuses_images(self) -> bool:
        """Whether a request with images gets a 400 (a model without ``"vision"``)."""
        return self.capabilities is not None and "vision" not in self.capabilities

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ScriptedModel:
        """Read a model from JSON (``POST /_models``)."""
        caps = data.get("capabilities", ("completion", "tools"))
        return cls(
            name=str(data["name"]),
            capabilities=None if caps is None else tuple(str(c) for c in caps),
            context_length=int(data.get("context_length", 32768)),
            template=str(data.get("template", "{{ .System }}{{ .Prompt }}")),
            family=str(data.get("family", "llama")),
        )


DEFAULT_MODELS = (
    ScriptedModel("scripted-tools"),
    ScriptedModel("scripted-vision", capabilities=("completion", "tools", "vision")),
    ScriptedModel("scripted-plain", capabilities=("completion",)),
)


def say(text: str, **options: Any) -> Reply:
    """A text answer; ``options`` are other :class:`Reply` fields (``delay``, ...)."""
    return Reply(text=text, **options)


def call_tools(*calls: ScriptedCall | tuple[str, Any], text: str = "", **options: Any) -> Reply:
    """An answer calling tools, given as :class:`ScriptedCall` or ``(name, arguments)``."""
    made = tuple(c if isinstance(c, ScriptedCall) else ScriptedCall(c[0], c[1]) for c in calls)
    return Reply(text=text, tool_calls=made, **options)


def fail(
    status: int,
    error: str = "",
    *,
    headers: Mapping[str, str] | None = None,
    endpoint: str = "chat",
) -> Reply:
    """An HTTP error answer."""
    return Reply(status=status, error=error, headers=dict(headers or {}), endpoint=endpoint)


def rate_limited(retry_after: float | None = 1.0) -> Reply:
    """A 429, with ``Retry-After`` in seconds unless None."""
    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
    return fail(429, "Rate limit reached for requests. Please try again later.", headers=headers)


def no_tools(model: str = "the model") -> Reply:
    """The 400 a server answers when the model cannot take tools."""
    return fail(400, f"registry.ollama.ai/library/{model} does not support tools")
