"""What the scripted model server answers on each path: the model APIs and the control ones.

The model APIs check a request as the real API would (:mod:`.protocol`: a violation is
answered 400), take the next scripted reply and write it in the protocol the path asks for
(OpenAI SSE/JSON, Ollama NDJSON/JSON, :mod:`.scripted_wire`; OpenAI's Responses API,
:mod:`.responses_wire`). The control paths
(``/_script``, ``/_requests``, ...) let a test in another process script the server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from . import protocol, responses_wire
from . import scripted_wire as wire
from .replies import Reply, ScriptedModel, fail
from .scripted_state import ServerState


class Exchange(Protocol):
    """One request being answered, as the routes see it (the HTTP handler)."""

    body_text: str
    """The request body as text (a reply's ``requires`` is looked for in it)."""

    @property
    def state(self) -> ServerState: ...

    def send_json(
        self,
        status: int,
        value: Any,
        headers: Mapping[str, str] | None = None,
        *,
        cut: bool = False,
    ) -> None: ...

    def send_bytes(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: Mapping[str, str] | None = None,
        *,
        cut: bool = False,
    ) -> None: ...

    def stream(
        self, reply: Reply, content_type: str, events: list[str], *, text_from: int = 0
    ) -> None: ...


# -- OpenAI ------------------------------------------------------------------------------


def openai_chat(exchange: Exchange, body: Any) -> None:
    violation = protocol.openai_violation(body)
    if violation is not None:
        exchange.send_json(400, wire.openai_error(fail(400, violation)))
        return
    reply = _chat_reply(exchange, body)
    if reply.failed:
        exchange.send_json(reply.status, wire.openai_error(reply), reply.headers)
        return
    model = str(body.get("model", ""))
    completion_id = f"chatcmpl-scripted{next(exchange.state.counter):06d}"
    usage = wire.estimate_usage(reply, body)
    if not body.get("stream"):
        made = wire.openai_completion(reply, model=model, completion_id=completion_id, usage=usage)
        exchange.send_json(200, made, reply.headers, cut=reply.cut_after is not None)
        return
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    chunks = wire.openai_chunks(
        reply,
        model=model,
        completion_id=completion_id,
        usage=usage,
        include_usage=include_usage,
    )
    events = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
    events.append("data: [DONE]\n\n")
    exchange.stream(reply, "text/event-stream", events, text_from=1)  # after the role


def openai_responses(exchange: Exchange, body: Any) -> None:
    """``/v1/responses``: the scripted reply as a ``response`` or its SSE events
    (:mod:`.responses_wire`), after the checks the Responses API makes."""
    violation = protocol.responses_violation(body)
    if violation is not None:
        exchange.send_json(400, wire.openai_error(fail(400, violation)))
        return
    model = str(body.get("model", ""))
    known = exchange.state.model(model)
    if known is not None and known.refuses_images() and "input_image" in exchange.body_text:
        reply = fail(400, f"{model} is not a multimodal model: images are not supported")
    else:
        taken = exchange.state.take("chat", exchange.body_text) or exchange.state.default_reply
        reply = taken.after_tool(responses_wire.was_answered(body))
    if reply.failed:
        exchange.send_json(reply.status, wire.openai_error(reply), reply.headers)
        return
    made = {
        "model": model,
        "response_id": f"resp_scripted{next(exchange.state.counter):06d}",
        "usage": responses_wire.estimate_usage(reply, body),
        "request": body,
    }
    if not body.get("stream"):
        whole = responses_wire.response_object(reply, **made)
        exchange.send_json(200, whole, reply.headers, cut=reply.cut_after is not None)
        return
    events = responses_wire.stream_events(reply, **made)
    framed = [responses_wire.sse(event) for event in events]
    first = responses_wire.first_text_event(events)
    exchange.stream(reply, "text/event-stream", framed, text_from=first)


def openai_models(exchange: Exchange, body: Any) -> None:
    reply = exchange.state.take("models")
    if reply is not None and reply.failed:
        exchange.send_json(reply.status, wire.openai_error(reply), reply.headers)
        return
    exchange.send_json(200, wire.openai_models(exchange.state.models))


# -- Ollama ------------------------------------------------------------------------------


def ollama_chat(exchange: Exchange, body: Any) -> None:
    violation = protocol.ollama_violation(body)
    if violation is not None:
        exchange.send_json(400, wire.ollama_error(fail(400, violation)))
        return
    reply = _chat_reply(exchange, body)
    if reply.failed:
        exchange.send_json(reply.status, wire.ollama_error(reply), reply.headers)
        return
    model = str(body.get("model", ""))
    usage = wire.estimate_usage(reply, body)
    if not body.get("stream", True):
        made = wire.ollama_response(reply, model=model, usage=usage)
        exchange.send_json(200, made, reply.headers, cut=reply.cut_after is not None)
        return
    parts = wire.ollama_parts(reply, model=model, usage=usage)
    lines = [json.dumps(part, ensure_ascii=False) + "\n" for part in parts]
    exchange.stream(reply, "application/x-ndjson", lines)


def ollama_tags(exchange: Exchange, body: Any) -> None:
    reply = exchange.state.take("models")
    if reply is not None and reply.failed:
        exchange.send_json(reply.status, wire.ollama_error(reply), reply.headers)
        return
    exchange.send_json(200, wire.ollama_tags(exchange.state.models))


def ollama_show(exchange: Exchange, body: Any) -> None:
    reply = exchange.state.take("show")
    if reply is not None and reply.failed:
        exchange.send_json(reply.status, wire.ollama_error(reply), reply.headers)
        return
    name = str(body.get("model") or body.get("name") or "")
    model = exchange.state.model(name)
    if model is None:
        exchange.send_json(404, {"error": f"model '{name}' not found"})
        return
    exchange.send_json(200, wire.ollama_show(model))


def ollama_generate(exchange: Exchange, body: Any) -> None:
    """``/api/generate``: a prompt (and a ``suffix`` for fill-in-the-middle), answered
    with NDJSON ``response`` parts."""
    known = exchange.state.model(str(body.get("model", "")))
    if body.get("suffix") and known is not None and known.refuses_insert():
        exchange.send_json(400, {"error": f'"{known.name}" does not support insert'})
        return
    reply = _chat_reply(exchange, body)
    if reply.failed:
        exchange.send_json(reply.status, wire.ollama_error(reply), reply.headers)
        return
    model = str(body.get("model", ""))
    usage = wire.estimate_usage(reply, body)
    parts = wire.ollama_generate_parts(reply, model=model, usage=usage)
    if not body.get("stream", True):
        final = {**parts[-1], "response": reply.text}
        exchange.send_json(200, final, reply.headers, cut=reply.cut_after is not None)
        return
    lines = [json.dumps(part, ensure_ascii=False) + "\n" for part in parts]
    exchange.stream(reply, "application/x-ndjson", lines)


def ollama_root(exchange: Exchange, body: Any) -> None:
    exchange.send_bytes(200, b"Ollama is running", "text/plain; charset=utf-8")


def _chat_reply(exchange: Exchange, body: Any) -> Reply:
    state = exchange.state
    model = state.model(str(body.get("model", "")))
    if body.get("tools") and model is not None and model.refuses_tools():
        return fail(400, f"registry.ollama.ai/library/{model.name} does not support tools")
    if model is not None and model.refuses_images() and wire.has_images(body):
        return fail(400, f"{model.name} is not a multimodal model: images are not supported")
    reply = state.take("chat", exchange.body_text) or state.default_reply
    return reply.for_messages(body.get("messages"))


# -- control -----------------------------------------------------------------------------


def script(exchange: Exchange, body: Any) -> None:
    items = body if isinstance(body, list) else [body]
    try:
        replies = [Reply.from_json(item) for item in items]
    except (ValueError, KeyError, TypeError) as e:
        exchange.send_json(400, {"error": f"Bad reply: {e}"})
        return
    exchange.send_json(200, {"queued": exchange.state.queue(replies)})


def requests(exchange: Exchange, body: Any) -> None:
    exchange.send_json(200, [r.to_json() for r in exchange.state.recorded()])


def aborted(exchange: Exchange, body: Any) -> None:
    with exchange.state.lock:
        cut_short = [r.to_json() for r in exchange.state.aborted]
    exchange.send_json(200, cut_short)


def reset(exchange: Exchange, body: Any) -> None:
    exchange.state.reset()
    exchange.send_json(200, {})


def models(exchange: Exchange, body: Any) -> None:
    try:
        offered = tuple(ScriptedModel.from_json(item) for item in body)
    except (ValueError, KeyError, TypeError) as e:
        exchange.send_json(400, {"error": f"Bad model: {e}"})
        return
    exchange.state.models = offered
    exchange.send_json(200, {"models": len(offered)})


ROUTES: dict[tuple[str, str], Callable[[Exchange, Any], None]] = {
    ("POST", "/v1/chat/completions"): openai_chat,
    ("POST", "/v1/responses"): openai_responses,
    ("GET", "/v1/models"): openai_models,
    ("POST", "/api/chat"): ollama_chat,
    ("POST", "/api/generate"): ollama_generate,
    ("GET", "/api/tags"): ollama_tags,
    ("POST", "/api/show"): ollama_show,
    ("GET", "/"): ollama_root,
    ("POST", "/_script"): script,
    ("GET", "/_requests"): requests,
    ("GET", "/_aborted"): aborted,
    ("POST", "/_reset"): reset,
    ("POST", "/_models"): models,
}
"""The handler of each method and path; paths starting with ``/_`` are not recorded."""
