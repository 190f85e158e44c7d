"""A scripted model server on 127.0.0.1 that speaks OpenAI's and Ollama's HTTP APIs.

Tests queue replies, point a real ``openai`` or ``ollama`` client at the server, and read
back every request it received. Standard library only; one thread per connection.

Endpoints: ``POST /v1/chat/completions`` (JSON or SSE), ``POST /v1/responses`` (JSON or
SSE: the Responses API, Codex's), ``GET /v1/models``,
``POST /api/chat`` (NDJSON or JSON), ``POST /api/generate`` (with ``suffix`` for
fill-in-the-middle), ``GET /api/tags``, ``POST /api/show``; and, for
tests in other languages, ``POST /_script`` (a JSON list of replies), ``GET /_requests``,
``GET /_aborted`` (requests whose client left mid-answer), ``POST /_reset`` and
``POST /_models``.

Example:
    >>> from jupyter_loop.testing import ScriptedModelServer, say
    >>> with ScriptedModelServer() as server:
    ...     server.script(say("Hello"))
    ...     server.openai_base_url.endswith("/v1")
    True

Run it on its own (for browser tests)::

    python -m jupyter_loop.testing.model_server --port 0 --print-port
"""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Iterable, Mapping
from types import FrameType, TracebackType
from typing import Any

from .replies import DEFAULT_MODELS, Reply, ScriptedModel
from .scripted_http import ScriptedHTTPServer
from .scripted_state import RecordedRequest, ServerState

__all__ = ["RecordedRequest", "ScriptedModelServer", "main"]


class ScriptedModelServer:
    """The scripted model server, as a context manager or with ``start()`` / ``stop()``.

    Args:
        host: The address to bind (keep it on loopback).
        port: The port; 0 picks a free one.
        models: The models it lists and describes.
        default_reply: The answer to a chat request when nothing is scripted.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Iterable[ScriptedModel] = DEFAULT_MODELS,
        default_reply: Reply | None = None,
    ) -> None:
        self._state = ServerState(models, default_reply or Reply(text="ok"))
        self._address = (host, port)
        self._server: ScriptedHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ScriptedModelServer:
        """Bind and serve in a background thread."""
        if self._server is None:
            self._server = ScriptedHTTPServer(self._address, self._state)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="scripted-model-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and free the port."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()
        server.close_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port it listens on."""
        if self._server is None:
            raise RuntimeError("The scripted model server is not running.")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{self._address[0]}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The OpenAI API root: ``<url>/v1``."""
        return f"{self.url}/v1"

    @property
    def ollama_host(self) -> str:
        """The Ollama host: the server's URL."""
        return self.url

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received since the start or the last reset, oldest first."""
        return self._state.recorded()

    @property
    def aborted(self) -> list[RecordedRequest]:
        """Requests whose client went away before the whole answer was sent."""
        with self._state.lock:
            return list(self._state.aborted)

    @property
    def first_text(self) -> list[tuple[RecordedRequest, float]]:
        """Streamed answers: each request with when (``time.time()``) the first event
        carrying text was sent (benchmarks compare it with a browser's clock)."""
        with self._state.lock:
            return list(self._state.first_text)

    def bodies(self, path: str) -> list[Any]:
        """The JSON bodies of the requests to ``path``."""
        return [r.body for r in self.requests if r.path == path]

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        with self._state.lock:
            return len(self._state.replies)

    def script(self, *replies: Reply | Mapping[str, Any]) -> None:
        """Queue replies, answered in order (JSON-shaped dicts are accepted too)."""
        self._state.queue(r if isinstance(r, Reply) else Reply.from_json(r) for r in replies)

    def set_models(self, *models: ScriptedModel) -> None:
        """Replace the models it lists."""
        self._state.models = tuple(models)

    def set_default_reply(self, reply: Reply) -> None:
        """The answer to chat requests when nothing is scripted."""
        self._state.default_reply = reply

    def reset(self) -> None:
        """Forget the queued replies and the recorded requests."""
        self._state.reset()


def main(argv: list[str] | None = None) -> int:
    """Run the server until interrupted (SIGINT or SIGTERM)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (0)")
    parser.add_argument("--print-port", action="store_true", help="print only the port")
    parser.add_argument("--default-text", default="ok", help="answer when nothing is scripted")
    args = parser.parse_args(argv)
    server = ScriptedModelServer(
        host=args.host, port=args.port, default_reply=Reply(text=args.default_text)
    )
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with server:
        print(
            server.port if args.print_port else f"Scripted model server at {server.url}", flush=True
        )
        while not stopping.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
