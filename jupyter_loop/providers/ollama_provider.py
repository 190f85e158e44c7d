"""Native Ollama (``/api/chat``, ``/api/tags``, ``/api/show``) through the ``ollama`` client.

Example:
    >>> OllamaProvider("http://127.0.0.1:11434", num_ctx=16384).label
    'Ollama at http://127.0.0.1:11434'
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx
import ollama

from .base import (
    Capabilities,
    ChatMessage,
    ModelEvent,
    ModelInfo,
    StreamEnd,
    TextDelta,
    ToolCallsReady,
    ToolSpec,
    Usage,
    function_tools,
)
from .errors import ErrorKind, ProviderError, detail, says_no_tools
from .ollama_wire import calls_from_ollama, to_ollama_messages
from .retry import RetryPolicy, retry_rate_limited

DEFAULT_HOST = "http://127.0.0.1:11434"
HOST_HINT = "OLLAMA_HOST or c.JupyterLoopApp.ollama_host"
#: The context window Ollama uses when ``num_ctx`` is not set (recent versions).
OLLAMA_DEFAULT_NUM_CTX = 4096
#: What the client raises when a call fails: HTTP statuses, transport errors, bad JSON.
_FAILURES = (
    ollama.ResponseError,
    httpx.HTTPError,
    ConnectionError,
    ValueError,
    KeyError,
    TypeError,
)


class OllamaProvider:
    """Chat with models served by Ollama.

    Args:
        host: Ollama's address; None: ``127.0.0.1:11434``. ``OLLAMA_HOST`` is read by the
            settings (``AgentSettings``), not here: one source.
        num_ctx: The context window to ask for (Ollama's default is small); None leaves
            Ollama's default.
        timeout: Seconds to wait for a connection or the next piece of an answer (the
            first may include loading the model).
        max_rate_limit_retries: Retries after a 429 before giving up.
        max_retry_wait: The longest wait between retries, in seconds.
        retry_default_wait: The first wait after a 429 (Ollama's client hides headers).
        keep_alive: How long Ollama keeps the model loaded (``"5m"``); None: its default.
    """

    name = "ollama"

    def __init__(
        self,
        host: str | None = None,
        *,
        num_ctx: int | None = None,
        timeout: float = 300.0,
        max_rate_limit_retries: int = 2,
        max_retry_wait: float = 20.0,
        retry_default_wait: float = 1.0,
        keep_alive: str | None = None,
    ) -> None:
        self.host = (host or DEFAULT_HOST).rstrip("/")
        self.label = f"Ollama at {self.host}"
        self._num_ctx = num_ctx
        self._timeout = timeout
        self._keep_alive = keep_alive
        self._retry = RetryPolicy(max_rate_limit_retries, max_retry_wait, retry_default_wait)
        self._client = ollama.AsyncClient(host=self.host, timeout=timeout)

    def __repr__(self) -> str:
        return f"OllamaProvider(host={self.host!r}, num_ctx={self._num_ctx!r})"

    async def stream(
        self,
        *,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        options: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[ModelEvent]:
        """Stream one step. ``options`` are Ollama model options (``temperature``, ...)."""
        request_options = dict(options or {})
        if self._num_ctx:
            request_options.setdefault("num_ctx", self._num_ctx)
        wire_messages = to_ollama_messages(messages)
        wire_tools = function_tools(tools)

        async def attempt() -> tuple[AsyncIterator[ollama.ChatResponse], ollama.ChatResponse]:
            # The client sends the request on the first read: read it here, so that a
            # refusal (429, 401, ...) surfaces where it can be retried.
            parts = None
            try:
                parts = await self._client.chat(
                    model=model,
                    messages=wire_messages,
                    tools=wire_tools or None,
                    stream=True,
                    options=request_options or None,
                    keep_alive=self._keep_alive,
                )
                return parts, await anext(parts)
            except StopAsyncIteration:
                raise self._make(
                    f"{self.label} sent an empty answer. Try again.", "stream"
                ) from None
            except _FAILURES as e:
                await _close(parts)
                raise self._error(e, model, streaming=False) from None

        parts, first = await retry_rate_limited(attempt, self._retry)
        try:
            async for event in self._events(model, first, parts):
                yield event
        finally:
            await _close(parts)

    async def _events(
        self, model: str, first: ollama.ChatResponse, parts: AsyncIterator[ollama.ChatResponse]
    ) -> AsyncIterator[ModelEvent]:
        calls: list[Any] = []
        part: ollama.ChatResponse | None = first
        last: ollama.ChatResponse | None = None
        try:
            # Read to the end even after "done", so the client's HTTP iterators finish
            # rather than linger until garbage collection.
            while part is not None:
                message = part.message
                if last is None or not last.done:
                    if message.content:
                        yield TextDelta(message.content)
                    calls.extend(message.tool_calls or ())
                    last = part
                part = await anext(parts, None)
        except _FAILURES as e:
            raise self._error(e, model, streaming=True) from None
        part = last
        if part is None or not part.done:
            raise self._make(
                f"The answer from {self.label} ended before it was complete (the stream closed "
                "before Ollama said it was done). Try again.",
                "stream",
            )
        if calls:
            yield ToolCallsReady(calls_from_ollama(calls))
        if part.prompt_eval_count is not None or part.eval_count is not None:
            yield Usage(part.prompt_eval_count or 0, part.eval_count or 0)
        reason = part.done_reason or "stop"
        yield StreamEnd("tool_calls" if calls and reason == "stop" else reason)

    async def fill_in_middle(
        self,
        *,
        model: str,
        prompt: str,
        suffix: str,
        options: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[ModelEvent]:
        """Stream the text between ``prompt`` and ``suffix`` (``/api/generate``).

        Yields text deltas, then :class:`Usage` if Ollama counted, then :class:`StreamEnd`.
        Closing the iterator early closes the HTTP response, which stops the generation.

        Raises:
            ProviderError: The request failed; ``kind`` says how.
        """
        request_options = dict(options or {})
        if self._num_ctx:
            request_options.setdefault("num_ctx", self._num_ctx)
        parts = None
        last: ollama.GenerateResponse | None = None
        try:
            parts = await self._client.generate(
                model=model,
                prompt=prompt,
                suffix=suffix,
                stream=True,
                options=request_options or None,
                keep_alive=self._keep_alive,
            )
            async for part in parts:
                if last is None or not last.done:
                    if part.response:
                        yield TextDelta(part.response)
                    last = part
        except _FAILURES as e:
            # The request is sent on the first read: a refusal comes before any part.
            raise self._error(e, model, streaming=last is not None) from None
        finally:
            await _close(parts)
        if last is None or not last.done:
            raise self._make(
                f"The answer from {self.label} ended before it was complete. Try again.", "stream"
            )
        if last.prompt_eval_count is not None or last.eval_count is not None:
            yield Usage(last.prompt_eval_count or 0, last.eval_count or 0)
        yield StreamEnd(last.done_reason or "stop")

    async def models(self) -> list[ModelInfo]:
        """The models Ollama has pulled (``/api/tags``), sorted by name."""
        try:
            listed = await self._client.list()
        except _FAILURES as e:
            raise self._error(e, None, streaming=False) from None
        names = sorted(entry.model for entry in listed.models if entry.model)
        return [ModelInfo(id=name, provider=self.name) for name in names]

    async def capabilities(self, model: str) -> Capabilities:
        """What ``/api/show`` says the model can do.

        Reads the ``capabilities`` list of recent Ollama; older servers lack it, so it falls
        back to the template (``.Tools``) and vision keys in ``model_info``. The context
        window is ``num_ctx`` (or Ollama's default), capped by the model's trained length.
        """
        try:
            shown = await self._client.show(model)
        except _FAILURES as e:
            raise self._error(e, model, streaming=False) from None
        info: Mapping[str, Any] = shown.modelinfo or {}
        if shown.capabilities is not None:
            tools = "tools" in shown.capabilities
            images = "vision" in shown.capabilities
        else:
            tools = ".Tools" in (shown.template or "")
            images = any(".vision." in key for key in info)
        trained = next(
            (v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)),
            None,
        )
        window = self._num_ctx or OLLAMA_DEFAULT_NUM_CTX
        return Capabilities(
            tools=tools, images=images, context_window=min(window, trained or window)
        )

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()

    # -- errors --------------------------------------------------------------------------

    def _error(self, e: Exception, model: str | None, *, streaming: bool) -> ProviderError:
        who = self.label
        if isinstance(e, ollama.ResponseError):
            return self._response_error(e.status_code, detail(e.error), model, streaming)
        if isinstance(e, httpx.TimeoutException):
            if streaming:
                return self._make(f"{who} stopped answering for {self._timeout:g} s.", "stream")
            return self._make(
                f"{who} did not answer within {self._timeout:g} s. Check that Ollama is running "
                f"and that {HOST_HINT} points at it.",
                "unreachable",
            )
        if isinstance(e, (ConnectionError, httpx.ConnectError)):
            return self._make(
                f"Could not reach {who}. Check that Ollama is running (`ollama serve`) and that "
                f"{HOST_HINT} points at it.",
                "unreachable",
            )
        if isinstance(e, httpx.TransportError):
            return self._make(
                f"The connection to {who} broke off in the middle of the answer. Try again.",
                "stream",
            )
        return self._make(
            f"{who} sent an answer that could not be read: {detail(e)}", "bad_response"
        )

    def _response_error(
        self, code: int, said: str, model: str | None, streaming: bool
    ) -> ProviderError:
        who = self.label
        told = f" Ollama said: {said}" if said else ""
        if says_no_tools(said):
            return self._make(
                f"The model '{model}' at {who} does not support tools, which the assistant "
                "needs. Choose a model that supports tool calling (for example llama3.1 or "
                f"qwen2.5).{told}",
                "no_tools",
                code,
            )
        if code in (401, 403):
            return self._make(
                f"{who} refused the request as unauthorised ({code}). If it sits behind a proxy "
                f"that needs a key, set OLLAMA_API_KEY.{told}",
                "auth",
                code,
            )
        if code == 429:
            return self._make(
                f"{who} is limiting the rate of requests (429).{told}", "rate_limit", code
            )
        if code == 404:
            what = f"the model '{model}'" if model else "this API"
            hint = f" Pull it with `ollama pull {model}`." if model else ""
            return self._make(f"{who} does not have {what} (404).{hint}{told}", "not_found", code)
        if code == -1 or streaming:
            return self._make(
                f"{who} reported an error in the middle of the answer: {said}", "server"
            )
        if code >= 500:
            return self._make(
                f"{who} failed with an internal error ({code}).{told}", "server", code
            )
        return self._make(f"{who} rejected the request ({code}).{told}", "server", code)

    def _make(self, message: str, kind: ErrorKind, code: int | None = None) -> ProviderError:
        return ProviderError(message, kind=kind, provider=self.label, status_code=code)


async def _close(parts: AsyncIterator[Any] | None) -> None:
    """Close the client's response generator (it holds the HTTP response open)."""
    aclose = getattr(parts, "aclose", None)
    if aclose is not None:
        await aclose()
