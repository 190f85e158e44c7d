"""OpenAI and OpenAI-compatible servers (Groq, vLLM, LM Studio, Ollama's ``/v1``).

Uses the official ``openai`` client with its own retries switched off: rate limits are
retried by :mod:`.retry`, everything else fails at once with a :class:`ProviderError`.

Example:
    >>> provider = OpenAIProvider(api_key="sk-test", base_url="http://127.0.0.1:8000/v1")
    >>> provider.label
    'the OpenAI-compatible server at http://127.0.0.1:8000/v1'
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast
from urllib.parse import urlparse

import openai
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam
from openai.types.chat import ChatCompletionToolUnionParam as ToolParam

from .base import (
    Capabilities,
    ChatMessage,
    ImagesRefused,
    ModelEvent,
    ModelInfo,
    StreamEnd,
    TextDelta,
    ToolCallsReady,
    ToolSpec,
    Usage,
    function_tools,
)
from .errors import ErrorKind, ProviderError, detail, says_no_images, says_no_tools
from .openai_wire import ToolCallAssembler, to_openai_messages
from .retry import RetryPolicy, parse_retry_after, retry_rate_limited

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_HINT = "Set OPENAI_API_KEY or c.JupyterLoopApp.openai_api_key."
URL_HINT = "OPENAI_BASE_URL or c.JupyterLoopApp.openai_base_url"
#: Sent when no key is configured for a server that needs none (local servers).
_NO_KEY = "no-key-configured"
#: ``images``: send them to every model, to none, or try and remember who refuses them.
IMAGE_MODES = ("auto", "on", "off")
IMAGES_LEFT_OUT = (
    "\n\n(The images mentioned above were not attached: the model does not take images.)"
)


class OpenAIProvider:
    """Chat completions from OpenAI or any OpenAI-compatible server.

    Args:
        api_key: The key; None: none (servers other than OpenAI's may need none). The
            environment is read by the settings (``AgentSettings``), not here: one source.
        base_url: The API root (``.../v1``); None: OpenAI's.
        timeout: Seconds to wait for a connection or for the next piece of an answer.
        max_rate_limit_retries: Retries after a 429 before giving up.
        max_retry_wait: The longest wait between retries, in seconds.
        retry_default_wait: The first wait when a 429 has no ``Retry-After``.
        include_usage: Ask for token usage at the end of a stream (some compatible
            servers reject ``stream_options``).
        label: The provider's name in messages (default: "OpenAI" or the server's URL).
        model_capabilities: Known capabilities per model id, overriding the guess.
        images: ``"auto"`` (default): send images to every model; a model whose server
            refuses them (a 4xx or 500 about images) gets the step again without them,
            and no images from then on. ``"on"``: always send (a refusal is an error).
            ``"off"``: never.
    """

    name = "openai"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 60.0,
        max_rate_limit_retries: int = 2,
        max_retry_wait: float = 20.0,
        retry_default_wait: float = 1.0,
        include_usage: bool = True,
        label: str | None = None,
        model_capabilities: Mapping[str, Capabilities] | None = None,
        images: str = "auto",
    ) -> None:
        url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._key = api_key or None
        self._base_url = url
        self._needs_key = urlparse(url).hostname == "api.openai.com"
        self.label = label or (
            "OpenAI" if self._needs_key else f"the OpenAI-compatible server at {url}"
        )
        self._timeout = timeout
        self._include_usage = include_usage
        self._known = dict(model_capabilities or {})
        if images not in IMAGE_MODES:
            raise ValueError(f"images must be one of {IMAGE_MODES}, not {images!r}")
        self._images = images
        self._refused_images: set[str] = set()
        self._retry = RetryPolicy(max_rate_limit_retries, max_retry_wait, retry_default_wait)
        self._client = openai.AsyncOpenAI(
            api_key=self._key or _NO_KEY, base_url=url, timeout=timeout, max_retries=0
        )

    def __repr__(self) -> str:
        key = "set" if self._key else "not set"
        return f"OpenAIProvider(base_url={self._base_url!r}, api_key={key})"

    async def stream(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        options: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[ModelEvent]:
        """Stream one step. ``options`` are extra request fields (``temperature``, ...)."""
        self._require_key()
        with_images = any(message.images for message in messages)
        if with_images and not self._takes_images(model):
            messages, with_images = without_images(messages), False
        wire_tools = cast("list[ToolParam]", function_tools(tools))

        async def attempt(sent: Sequence[ChatMessage]) -> openai.AsyncStream[ChatCompletionChunk]:
            wire_messages = cast("list[ChatCompletionMessageParam]", to_openai_messages(sent))
            try:
                return await self._client.chat.completions.create(
                    model=model,
                    messages=wire_messages,
                    tools=wire_tools or openai.omit,
                    stream=True,
                    stream_options={"include_usage": True} if self._include_usage else openai.omit,
                    extra_body=dict(options) if options else None,
                )
            except openai.APIError as e:
                raise self._error(e, model, streaming=False) from None

        try:
            chunks = await retry_rate_limited(lambda: attempt(messages), self._retry)
        except ProviderError as e:
            if not (with_images and self._images == "auto" and _refuses_images(e)):
                raise
            self._refused_images.add(model)
            yield ImagesRefused(e.message)
            plain = without_images(messages)
            chunks = await retry_rate_limited(lambda: attempt(plain), self._retry)
        try:
            async for event in self._events(model, chunks):
                yield event
        finally:
            await chunks.close()

    async def _events(
        self, model: str, chunks: openai.AsyncStream[ChatCompletionChunk]
    ) -> AsyncIterator[ModelEvent]:
        calls = ToolCallAssembler()
        finish: str | None = None
        usage: Usage | None = None
        try:
            async for chunk in chunks:
                if chunk.usage is not None:
                    usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None and delta.content:
                        yield TextDelta(delta.content)
                    for piece in (delta.tool_calls if delta is not None else None) or ():
                        function = piece.function
                        calls.add(
                            index=piece.index,
                            call_id=piece.id,
                            name=function.name if function else None,
                            arguments=function.arguments if function else None,
                        )
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except openai.APIError as e:
            raise self._error(e, model, streaming=True) from None
        except (ValueError, AttributeError, TypeError) as e:
            raise ProviderError(
                f"{_cap(self.label)} sent an answer that could not be read: {detail(e)}",
                kind="bad_response",
                provider=self.label,
            ) from None
        if finish is None:
            raise ProviderError(
                f"The answer from {self.label} ended before it was complete (the stream closed "
                "without a finish reason). Try again.",
                kind="stream",
                provider=self.label,
            )
        if calls:
            yield ToolCallsReady(calls.result())
            finish = "tool_calls" if finish == "stop" else finish
        if usage is not None:
            yield usage
        yield StreamEnd(finish)

    async def models(self) -> list[ModelInfo]:
        """The models the server lists at ``GET /models``, sorted by id."""
        self._require_key()
        try:
            found = [
                ModelInfo(id=m.id, provider=self.name) async for m in self._client.models.list()
            ]
        except openai.APIError as e:
            raise self._error(e, None, streaming=False) from None
        return sorted(found, key=lambda info: info.id)

    async def capabilities(self, model: str) -> Capabilities:
        """What the model can do: configured, else assumed, as far as ``images`` allows.

        The chat-completions API does not say; tools are assumed (a model without them
        fails its first step with kind ``"no_tools"``), and so are images under ``"auto"``
        until the server refuses them.
        """
        known = self._known.get(model)
        if known is not None:
            return replace(known, images=known.images and self._takes_images(model))
        return Capabilities(tools=True, images=self._takes_images(model), context_window=None)

    def _takes_images(self, model: str) -> bool:
        if self._images == "auto":
            return model not in self._refused_images
        return self._images == "on"

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()

    # -- errors --------------------------------------------------------------------------

    def _require_key(self) -> None:
        if self._needs_key and not self._key:
            raise ProviderError(
                f"No OpenAI API key is set. {KEY_HINT}", kind="auth", provider="OpenAI"
            )

    def _error(self, e: openai.APIError, model: str | None, *, streaming: bool) -> ProviderError:
        who = self.label
        if isinstance(e, openai.APITimeoutError):
            if streaming:
                return self._make(
                    f"{_cap(who)} stopped answering for {self._timeout:g} s.", "stream"
                )
            return self._make(
                f"{_cap(who)} did not answer within {self._timeout:g} s. Check that it is "
                f"running and reachable ({URL_HINT}).",
                "unreachable",
            )
        if isinstance(e, openai.APIConnectionError):
            if streaming:
                return self._make(
                    f"The connection to {who} broke off in the middle of the answer. Try again.",
                    "stream",
                )
            where = who if self._base_url in who else f"{who} at {self._base_url}"
            return self._make(
                f"Could not reach {where}. Check that it is running and that the URL is right "
                f"({URL_HINT}).",
                "unreachable",
            )
        said = detail(_server_message(e), [self._key])
        if isinstance(e, openai.APIStatusError):
            return self._status_error(e.status_code, said, model, e.response.headers)
        if says_no_tools(said):
            return self._no_tools(model, said)
        return self._make(
            f"{_cap(who)} reported an error in the middle of the answer: {said}", "server"
        )

    def _status_error(
        self, code: int, said: str, model: str | None, headers: Mapping[str, str]
    ) -> ProviderError:
        who = _cap(self.label)
        told = f" The server said: {said}" if said else ""
        if code in (401, 403):
            return self._make(
                f"{who} rejected the API key ({code}). {KEY_HINT}{told}", "auth", code
            )
        if code == 429:
            return ProviderError(
                f"{who} is limiting the rate of requests (429).{told}",
                kind="rate_limit",
                provider=self.label,
                retry_after=parse_retry_after(headers),
                status_code=code,
            )
        if code in (400, 404, 422) and says_no_tools(said):
            return self._no_tools(model, said, code)
        if code == 404:
            what = f"the model '{model}'" if model else "this API"
            return self._make(
                f"{who} does not know {what} (404). Check the name.{told}", "not_found", code
            )
        if code >= 500:
            return self._make(
                f"{who} failed with an internal error ({code}). Try again later.{told}",
                "server",
                code,
            )
        return self._make(f"{who} rejected the request ({code}).{told}", "server", code)

    def _no_tools(self, model: str | None, said: str, code: int | None = None) -> ProviderError:
        return self._make(
            f"The model '{model}' at {self.label} does not support tools, which the assistant "
            f"needs. Choose a model that supports tool calling. The server said: {said}",
            "no_tools",
            code,
        )

    def _make(self, message: str, kind: ErrorKind, code: int | None = None) -> ProviderError:
        return ProviderError(message, kind=kind, provider=self.label, status_code=code)


def _refuses_images(e: ProviderError) -> bool:
    refusal = e.status_code in (400, 415, 422) or (e.status_code or 0) >= 500
    return refusal and says_no_images(e.message)


def without_images(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages with their images taken out and a line saying so.

    Example:
        >>> from jupyter_loop.providers.base import ImagePart
        >>> image = ImagePart("image/png", "AA")
        >>> sent = without_images([ChatMessage("user", "see", images=(image,))])
        >>> sent[0].images, sent[0].content.endswith("the model does not take images.)")
        ((), True)
    """
    return [
        replace(message, images=(), content=message.content + IMAGES_LEFT_OUT)
        if message.images
        else message
        for message in messages
    ]


def _server_message(e: openai.APIError) -> str:
    body = e.body
    if isinstance(body, Mapping):
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    if isinstance(body, str) and body:
        return body
    return e.message


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
