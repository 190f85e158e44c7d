"""One tornado request served by an ASGI application (the MCP SDK's Streamable HTTP transport).

The SDK's transport is written for ASGI; Jupyter's server is tornado. Rather than re-implement
the transport (sessions, SSE framing, resumption, protocol-version checks), each request the
tornado handler has authenticated is handed to the SDK as one ASGI ``http`` request: the body
is already read, response chunks are written and flushed as they come (SSE streams stay
open), and the client going away is reported as ``http.disconnect``. Extra keys in the scope
carry what the tool handlers need from the tornado side (who calls, and their rights).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler

Message = MutableMapping[str, Any]
AsgiApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[Message]],
        Callable[[Message], Awaitable[None]],
    ],
    Awaitable[None],
]


def asgi_scope(handler: RequestHandler, extra: dict[str, Any]) -> dict[str, Any]:
    """The ASGI scope of the handler's request (the path as the client sent it)."""
    request = handler.request
    host, _, port = (request.host or "").partition(":")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": request.version.removeprefix("HTTP/"),
        "method": request.method or "GET",
        "scheme": request.protocol,
        "path": request.path,
        "raw_path": request.path.encode(),
        "query_string": request.query.encode("latin-1"),
        "root_path": "",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.get_all()
        ],
        "client": (request.remote_ip or "", 0),
        "server": (host, int(port) if port.isdigit() else 80),
        **extra,
    }


class TornadoExchange:
    """Feeds one request into an ASGI app and streams its response back through tornado."""

    def __init__(self, handler: RequestHandler) -> None:
        self._handler = handler
        self._body_sent = False
        self.closed = asyncio.Event()
        self.started = False
        self.on_start: Callable[[int, dict[str, str]], None] | None = None
        """Told the response's status and headers (lower-case names) when it starts."""

    async def receive(self) -> Message:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self._handler.request.body, "more_body": False}
        await self.closed.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        handler = self._handler
        if message["type"] == "http.response.start":
            self.started = True
            status = int(message["status"])
            handler.set_status(status)
            handler.clear_header("Content-Type")
            headers: dict[str, str] = {}
            for name, value in message.get("headers", []):
                key, text = name.decode("latin-1"), value.decode("latin-1")
                handler.add_header(key, text)
                headers[key.lower()] = text
            if self.on_start is not None:
                self.on_start(status, headers)
            return
        if message["type"] != "http.response.body" or self.closed.is_set():
            return
        body = message.get("body", b"")
        if body:
            handler.write(body)
        if message.get("more_body", False):
            try:
                await handler.flush()
            except StreamClosedError:
                self.closed.set()

    async def serve(self, app: AsgiApp, extra: dict[str, Any]) -> None:
        """Run the app on the request; finish the tornado response when it is done."""
        await app(asgi_scope(self._handler, extra), self.receive, self.send)
        if not self.closed.is_set():
            self._handler.finish()
