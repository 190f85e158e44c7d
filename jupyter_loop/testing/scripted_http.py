"""The HTTP side of the scripted model server: the request handler and the shared state.

One handler thread per connection reads the request, records it, checks it as the real API
would (:mod:`.protocol`: a violation is answered 400), takes the next scripted
reply and writes it in the protocol the path asks for (OpenAI SSE/JSON, Ollama NDJSON/JSON).
Streams are sent chunked, one event per chunk, so a reply can be cut off mid-body.
"""

from __future__ import annotations

import itertools
import json
import logging
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from . import protocol
from . import scripted_wire as wire
from .replies import Reply, ScriptedModel, fail

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received.

    Attributes:
        method: ``"GET"`` or ``"POST"``.
        path: The URL path (``/v1/chat/completions``).
        body: The parsed JSON body (None for none).
        headers: The request headers, names lower-cased.
        received_at: ``time.monotonic()`` when its headers had arrived (benchmarks).
    """

    method: str
    path: str
    body: Any
    headers: Mapping[str, str]
    received_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The request as ``GET /_requests`` lists it."""
        return {
            "method": self.method,
            "path": self.path,
            "body": self.body,
            "headers": dict(self.headers),
        }


class ServerState:
    """The script, the record and the models, shared by the connection threads."""

    def __init__(self, models: Iterable[ScriptedModel], default_reply: Reply) -> None:
        self.lock = threading.Lock()
        self.replies: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.aborted: list[RecordedRequest] = []
        self.first_text: list[tuple[RecordedRequest, float]] = []
        """Streamed requests, each with when (``time.time()``, comparable with a browser's
        ``Date.now()`` on the same machine) the first event with answer text was sent."""
        self.models = tuple(models)
        self.default_reply = default_reply
        self.counter = itertools.count(1)

    def take(self, endpoint: str, body_text: str = "") -> Reply | None:
        """The first queued reply for ``endpoint`` whose ``requires`` is in ``body_text``;
        for chat, the default if none."""
        with self.lock:
            for reply in self.replies:
                if reply.endpoint == endpoint and reply.requires in body_text:
                    self.replies.remove(reply)
                    return reply
        return self.default_reply if endpoint == "chat" else None

    def model(self, name: str) -> ScriptedModel | None:
        """The model of that name, if the server offers it."""
        return next((m for m in self.models if m.name == name), None)

    def queue(self, replies: Iterable[Reply]) -> int:
        """Append replies to the script; returns how many are waiting."""
        with self.lock:
            self.replies.extend(replies)
            return len(self.replies)

    def record(self, request: RecordedRequest) -> None:
        """Remember a request."""
        with self.lock:
            self.requests.append(request)

    def record_abort(self, request: RecordedRequest) -> None:
        """Remember that the client went away before the answer was complete."""
        with self.lock:
            self.aborted.append(request)

    def record_first_text(self, request: RecordedRequest, at: float) -> None:
        """Remember when the first text of the answer to ``request`` was sent."""
        with self.lock:
            self.first_text.append((request, at))

    def recorded(self) -> list[RecordedRequest]:
        """The requests so far, oldest first."""
        with self.lock:
            return list(self.requests)

    def reset(self) -> None:
        """Forget the script and the record."""
        with self.lock:
            self.replies.clear()
            self.requests.clear()
            self.aborted.clear()
            self.first_text.clear()


class ScriptedHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that knows its state and its open connections."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: ServerState) -> None:
        super().__init__(address, _Handler)
        self.state = state
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops its connection is normal here; anything else is logged."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            return
        log.exception("The scripted model server failed on a request from %s", client_address)

    def close_connections(self) -> None:
        """Drop every open connection (kept-alive ones would otherwise outlive a stop)."""
        with self.connections_lock:
            for connection in self.connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptedHTTPServer
    timeout = 60
    _body_text = ""
    _recorded: RecordedRequest | None = None

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    # -- dispatch ------------------------------------------------------------------------

    def _handle(self, method: str) -> None:
        received_at = time.monotonic()
        path = urlsplit(self.path).path.rstrip("/") or "/"
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            self._send_json(400, {"error": "The request body is not valid JSON."})
            return
        route = _ROUTES.get((method, path))
        if route is None:
            self._send_json(404, {"error": f"No route for {method} {path}."})
            return
        recorded = None
        if not path.startswith("/_"):
            headers = {name.lower(): value for name, value in self.headers.items()}
            recorded = RecordedRequest(method, path, body, headers, received_at)
            self.server.state.record(recorded)
        self._body_text = raw.decode("utf-8", "replace")
        self._recorded = recorded
        try:
            route(self, body if body is not None else {})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (a stopped turn)
            if recorded is not None:
                self.server.state.record_abort(recorded)

    # -- OpenAI --------------------------------------------------------------------------

    def _openai_chat(self, body: Any) -> None:
        violation = protocol.openai_violation(body)
        if violation is not None:
            self._send_json(400, wire.openai_error(fail(400, violation)))
            return
        reply = self._chat_reply(body)
        if reply.failed:
            self._send_json(reply.status, wire.openai_error(reply), reply.headers)
            return
        model = str(body.get("model", ""))
        completion_id = f"chatcmpl-scripted{next(self.server.state.counter):06d}"
        usage = wire.estimate_usage(reply, body)
        if not body.get("stream"):
            made = wire.openai_completion(
                reply, model=model, completion_id=completion_id, usage=usage
            )
            self._send_json(200, made, reply.headers, cut=reply.cut_after is not None)
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
        self._stream(reply, "text/event-stream", events, text_from=1)  # after the role

    def _openai_models(self, body: Any) -> None:
        reply = self.server.state.take("models")
        if reply is not None and reply.failed:
            self._send_json(reply.status, wire.openai_error(reply), reply.headers)
            return
        self._send_json(200, wire.openai_models(self.server.state.models))

    # -- Ollama --------------------------------------------------------------------------

    def _ollama_chat(self, body: Any) -> None:
        violation = protocol.ollama_violation(body)
        if violation is not None:
            self._send_json(400, wire.ollama_error(fail(400, violation)))
            return
        reply = self._chat_reply(body)
        if reply.failed:
            self._send_json(reply.status, wire.ollama_error(reply), reply.headers)
            return
        model = str(body.get("model", ""))
        usage = wire.estimate_usage(reply, body)
        if not body.get("stream", True):
            made = wire.ollama_response(reply, model=model, usage=usage)
            self._send_json(200, made, reply.headers, cut=reply.cut_after is not None)
            return
        parts = wire.ollama_parts(reply, model=model, usage=usage)
        lines = [json.dumps(part, ensure_ascii=False) + "\n" for part in parts]
        self._stream(reply, "application/x-ndjson", lines)

    def _ollama_tags(self, body: Any) -> None:
        reply = self.server.state.take("models")
        if reply is not None and reply.failed:
            self._send_json(reply.status, wire.ollama_error(reply), reply.headers)
            return
        self._send_json(200, wire.ollama_tags(self.server.state.models))

    def _ollama_show(self, body: Any) -> None:
        reply = self.server.state.take("show")
        if reply is not None and reply.failed:
            self._send_json(reply.status, wire.ollama_error(reply), reply.headers)
            return
        name = str(body.get("model") or body.get("name") or "")
        model = self.server.state.model(name)
        if model is None:
            self._send_json(404, {"error": f"model '{name}' not found"})
            return
        self._send_json(200, wire.ollama_show(model))

    def _ollama_generate(self, body: Any) -> None:
        """``/api/generate``: a prompt (and a ``suffix`` for fill-in-the-middle), answered
        with NDJSON ``response`` parts."""
        known = self.server.state.model(str(body.get("model", "")))
        if body.get("suffix") and known is not None and known.refuses_insert():
            self._send_json(400, {"error": f'"{known.name}" does not support insert'})
            return
        reply = self._chat_reply(body)
        if reply.failed:
            self._send_json(reply.status, wire.ollama_error(reply), reply.headers)
            return
        model = str(body.get("model", ""))
        usage = wire.estimate_usage(reply, body)
        parts = wire.ollama_generate_parts(reply, model=model, usage=usage)
        if not body.get("stream", True):
            final = {**parts[-1], "response": reply.text}
            self._send_json(200, final, reply.headers, cut=reply.cut_after is not None)
            return
        lines = [json.dumps(part, ensure_ascii=False) + "\n" for part in parts]
        self._stream(reply, "application/x-ndjson", lines)

    def _chat_reply(self, body: Any) -> Reply:
        model = self.server.state.model(str(body.get("model", "")))
        if body.get("tools") and model is not None and model.refuses_tools():
            return fail(400, f"registry.ollama.ai/library/{model.name} does not support tools")
        if model is not None and model.refuses_images() and wire.has_images(body):
            return fail(400, f"{model.name} is not a multimodal model: images are not supported")
        reply = self.server.state.take("chat", self._body_text) or self.server.state.default_reply
        return reply.for_messages(body.get("messages"))

    # -- control -------------------------------------------------------------------------

    def _script(self, body: Any) -> None:
        items = body if isinstance(body, list) else [body]
        try:
            replies = [Reply.from_json(item) for item in items]
        except (ValueError, KeyError, TypeError) as e:
            self._send_json(400, {"error": f"Bad reply: {e}"})
            return
        self._send_json(200, {"queued": self.server.state.queue(replies)})

    def _requests(self, body: Any) -> None:
        self._send_json(200, [r.to_json() for r in self.server.state.recorded()])

    def _aborted(self, body: Any) -> None:
        with self.server.state.lock:
            aborted = [r.to_json() for r in self.server.state.aborted]
        self._send_json(200, aborted)

    def _reset(self, body: Any) -> None:
        self.server.state.reset()
        self._send_json(200, {})

    def _models(self, body: Any) -> None:
        try:
            models = tuple(ScriptedModel.from_json(item) for item in body)
        except (ValueError, KeyError, TypeError) as e:
            self._send_json(400, {"error": f"Bad model: {e}"})
            return
        self.server.state.models = models
        self._send_json(200, {"models": len(models)})

    def _root(self, body: Any) -> None:
        self._send_bytes(200, b"Ollama is running", "text/plain; charset=utf-8")

    # -- writing -------------------------------------------------------------------------

    def _send_json(
        self,
        status: int,
        value: Any,
        headers: Mapping[str, str] | None = None,
        *,
        cut: bool = False,
    ) -> None:
        data = json.dumps(value, ensure_ascii=False).encode()
        self._send_bytes(status, data, "application/json", headers, cut=cut)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: Mapping[str, str] | None = None,
        *,
        cut: bool = False,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if cut:
            self.wfile.write(data[: len(data) // 2])
            self._cut()
            return
        self.wfile.write(data)

    def _stream(
        self, reply: Reply, content_type: str, events: list[str], *, text_from: int = 0
    ) -> None:
        """Send ``events`` as a chunked body, each in its own chunk, as the reply says;
        note when event ``text_from`` (the first with the answer's text) went out."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for sent, event in enumerate(events):
            if reply.cut_after is not None and sent >= reply.cut_after:
                self._cut()
                return
            if reply.delay:
                time.sleep(reply.delay)
            data = event.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            if sent == text_from and reply.text and self._recorded is not None:
                self.server.state.record_first_text(self._recorded, time.time())
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _cut(self) -> None:
        """Drop the connection mid-body, as a crashed server or a broken network does."""
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


_ROUTES: dict[tuple[str, str], Callable[[_Handler, Any], None]] = {
    ("POST", "/v1/chat/completions"): _Handler._openai_chat,
    ("GET", "/v1/models"): _Handler._openai_models,
    ("POST", "/api/chat"): _Handler._ollama_chat,
    ("POST", "/api/generate"): _Handler._ollama_generate,
    ("GET", "/api/tags"): _Handler._ollama_tags,
    ("POST", "/api/show"): _Handler._ollama_show,
    ("GET", "/"): _Handler._root,
    ("POST", "/_script"): _Handler._script,
    ("GET", "/_requests"): _Handler._requests,
    ("GET", "/_aborted"): _Handler._aborted,
    ("POST", "/_reset"): _Handler._reset,
    ("POST", "/_models"): _Handler._models,
}
