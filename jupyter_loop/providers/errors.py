"""Errors a model provider raises, in words a user can act on, with secrets kept out.

Every failure of a model call ends up as a :class:`ProviderError` whose ``kind`` says what
went wrong (so the agent can decide what to do) and whose ``message`` names the provider
and what to check. Server-supplied details are passed through :func:`redact` first: some
servers echo the API key, or part of it, in their error text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from ..errors import JupyterLoopError

ErrorKind = Literal[
    "unreachable", "auth", "rate_limit", "server", "no_tools", "stream", "bad_response", "not_found"
]

#: Shapes of well-known credentials, masked in any text a provider passes on.
_TOKEN_SHAPES = re.compile(
    r"(?:sk|pk|rk|gsk|xai|ghp|gho|hf)[-_][A-Za-z0-9_\-*.]{8,}"  # sk-..., gsk_..., hf_...
    r"|(?i:bearer)\s+[A-Za-z0-9_\-.=+/]{8,}"
)

#: Server messages that mean "this model cannot take tools", across OpenAI-compatible
#: servers (Ollama's /v1, vLLM, Groq, OpenRouter, LM Studio) and native Ollama.
_NO_TOOLS = re.compile(
    r"does(?: not|n't) support (?:tools|tool use|tool calling|tool calls|function calling)"
    r"|tools? (?:are|is) not supported"
    r"|(?:tool|function) calling is not supported"
    r"|no endpoints found that support tool use"
    r"|tool-call-parser"
    r"|tool_choice[^.]*not supported",
    re.IGNORECASE,
)

#: Server messages that mean "this model cannot take images" (OpenAI, vLLM, llama.cpp,
#: LM Studio, Ollama): the request is then sent again without them.
_NO_IMAGES = re.compile(
    r"image|multimodal|multi-modal|vision|mmproj",
    re.IGNORECASE,
)

_MAX_DETAIL = 300


class ProviderError(JupyterLoopError):
    """A model call failed.

    Attributes:
        kind: What failed: ``"unreachable"``, ``"auth"``, ``"rate_limit"``, ``"server"``,
            ``"no_tools"``, ``"stream"``, ``"bad_response"`` or ``"not_found"``.
        provider: The provider's display name (``"OpenAI"``, ``"Ollama at http://..."``).
        retry_after: Seconds the server asked us to wait (rate limits), if it said.
        status_code: The HTTP status the model server answered with, if any.

    The HTTP status a request that hit this error gets is 502 (429 for rate limits), never
    the upstream 401: a 401 from Jupyter would make the browser think its own login expired.

    Example:
        >>> e = ProviderError("OpenAI rejected the API key (401).", kind="auth")
        >>> (e.kind, e.status)
        ('auth', 502)
    """

    status = 502

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        provider: str = "",
        retry_after: float | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.provider = provider
        self.retry_after = retry_after
        self.status_code = status_code
        if kind == "rate_limit":
            self.status = 429

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, message={self.message!r})"


class BadToolArguments(ProviderError):
    """The model called a tool with arguments that are not a JSON object.

    Attributes:
        tool_name: The tool the model called.
        arguments_json: The text the model sent as arguments.
    """

    def __init__(self, tool_name: str, arguments_json: str, reason: str) -> None:
        shown = arguments_json if len(arguments_json) <= 80 else arguments_json[:77] + "..."
        super().__init__(
            f"The model called the tool '{tool_name}' with arguments that are not a JSON object "
            f"({reason}). It sent: {shown!r}",
            kind="bad_response",
        )
        self.tool_name = tool_name
        self.arguments_json = arguments_json


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Mask the given secret values and anything shaped like a credential.

    Args:
        text: Text that may contain a secret (a server's error message).
        secrets: Exact values to mask (the configured API key); ``None`` and short
            values are skipped.

    Returns:
        The text with each secret replaced by ``***``.

    Example:
        >>> redact("Incorrect API key provided: sk-abcdef123456", ["sk-abcdef123456"])
        'Incorrect API key provided: ***'
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _TOKEN_SHAPES.sub("***", text)


def detail(text: object, secrets: Iterable[str | None] = ()) -> str:
    """A server's error text made fit to show: redacted, one line, bounded length."""
    cleaned = " ".join(redact(str(text), secrets).split())
    if len(cleaned) > _MAX_DETAIL:
        cleaned = cleaned[: _MAX_DETAIL - 3] + "..."
    return cleaned


def says_no_tools(text: str) -> bool:
    """Whether a server's error text says the model does not take tools."""
    return bool(_NO_TOOLS.search(text))


def says_no_images(text: str) -> bool:
    """Whether a server's refusal of a request with images is about the images."""
    return bool(_NO_IMAGES.search(text))
