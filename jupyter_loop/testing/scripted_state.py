"""The scripted model server's shared state: the script of replies, the record of requests.

Connection threads take replies and record requests under one lock; the test thread
queues replies and reads the record through the same object.

Example:
    >>> state = ServerState([], Reply(text="ok"))
    >>> state.queue([Reply(text="first")])
    1
    >>> state.take("chat").text, state.take("chat").text
    ('first', 'ok')
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .replies import Reply, ScriptedModel


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
