"""The HTTP side of the scripted model server: connections, dispatch and writing.

One handler thread per connection reads the request, records it, and hands it to the route
for its method and path (:mod:`.scripted_routes`: what to answer). Streams are sent
chunked, one event per chunk, so a reply can be cut off mid-body, as a crashed server or a
broken network does.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .replies import Reply
from .scripted_routes import ROUTES
from .scripted_state import RecordedRequest, ServerState

log = logging.getLogger(__name__)


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
    """Answers one connection's requests (the :class:`~.scripted_routes.Exchange` of the
    routes)."""

    protocol_version = "HTTP/1.1"
    server: ScriptedHTTPServer
    timeout = 60
    body_text = ""
    recorded: RecordedRequest | None = None

    @property
    def state(self) -> ServerState:
        return self.server.state

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
            self.send_json(400, {"error": "The request body is not valid JSON."})
            return
        route = ROUTES.get((method, path))
        if route is None:
            self.send_json(404, {"error": f"No route for {method} {path}."})
            return
        recorded = None
        if not path.startswith("/_"):
            headers = {name.lower(): value for name, value in self.headers.items()}
            recorded = RecordedRequest(method, path, body, headers, received_at)
            self.state.record(recorded)
        self.body_text = raw.decode("utf-8", "replace")
        self.recorded = recorded
        try:
            route(self, body if body is not None else {})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (a stopped turn)
            if recorded is not None:
                self.state.record_abort(recorded)

    # -- writing -------------------------------------------------------------------------

    def send_json(
        self,
        status: int,
        value: Any,
        headers: Mapping[str, str] | None = None,
        *,
        cut: bool = False,
    ) -> None:
        data = json.dumps(value, ensure_ascii=False).encode()
        self.send_bytes(status, data, "application/json", headers, cut=cut)

    def send_bytes(
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

    def stream(
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
            if sent == text_from and reply.text and self.recorded is not None:
                self.state.record_first_text(self.recorded, time.time())
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
