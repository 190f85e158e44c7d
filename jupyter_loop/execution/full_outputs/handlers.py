"""The full output of a run, kept on the server when the notebook keeps only part of it.

``GET /api/jupyter-loop/outputs/{file_id}/{cell_id}/{run_id}`` serves the whole run as
text (streams as printed, other outputs as a line with their own link), or with
``?format=nbformat`` as the outputs a notebook holds, ``{"outputs": [...]}``, for a run
whose output fit the notebook (409 for a cut one: what the History view renders);
``.../{run_id}/{part}`` serves one output: a stream's text, or the payload of a rich
output (``?mime=`` picks the type; by default its largest one), decoded when binary.
Markers and placeholders in the notebook link here. Route table at the bottom.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from tornado import web

from ...access.rights import Ability, requires
from ...errors import NotFound
from ...handlers import LoopHandler
from ..outputs.budget import value_size
from ..outputs.terminal import strip_ansi
from ..outputs.traits import OUTPUTS_PATH
from .store import NAME_PATTERN, FileOutputStore, RunKey, StoredPart

_BINARY = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "application/pdf")
_SHOWN_AS_IS = ("text/plain", "text/html", "text/markdown", "text/csv", "image/svg+xml")

# A stored output is a document of its own: it may show images and styles, never run code.
_SANDBOX = (
    "sandbox; default-src 'none'; img-src data: blob:; media-src data: blob:; "
    "style-src 'unsafe-inline'; font-src data:; frame-ancestors 'self'"
)


class FullOutputHandler(LoopHandler):
    @property
    def store(self) -> FileOutputStore:
        return self.settings["jupyter_loop_outputs"]

    @property
    def content_security_policy(self) -> str:
        return _SANDBOX

    @web.authenticated
    @requires(Ability.READ)
    async def get(self, file_id: str, cell_id: str, run_id: str, part: str | None = None) -> None:
        key = RunKey(file_id, cell_id, run_id)
        self.set_header("X-Content-Type-Options", "nosniff")
        if part is None and self.get_query_argument("format", "") == "nbformat":
            budget = self.settings.get("jupyter_loop_output_budget")
            self.reply({"outputs": self.store.outputs(key, budget)})
            return
        if part is None:
            self.store.parts(key)  # a missing record is a 404 before anything is sent
            prefix = f"{self.base_url.rstrip('/')}/{OUTPUTS_PATH}/{file_id}/{cell_id}/{run_id}"
            await self._send(self.store.full_text(key, lambda n: f"{prefix}/{n}"), _TEXT)
            return
        stored = _find(self.store.parts(key), int(part))
        if stored.dropped:
            raise NotFound("This output was over the size limit of a run and was not kept.")
        if stored.type == "stream":
            await self._send(self.store.read(key, stored), _TEXT)
            return
        output = self.store.load_output(key, stored)
        body, content_type = _payload(output, self.get_query_argument("mime", ""))
        await self._send(iter([body]), content_type)

    async def _send(self, chunks: Any, content_type: str) -> None:
        self.set_header("Content-Type", content_type)
        for chunk in chunks:
            self.write(chunk)
            await self.flush()
        await self.finish(set_content_type=content_type)


_TEXT = "text/plain; charset=utf-8"


def _find(parts: list[StoredPart], number: int) -> StoredPart:
    for stored in parts:
        if stored.part == number:
            return stored
    raise NotFound(f"This run has no output {number}.")


def _payload(output: dict[str, Any], mime: str) -> tuple[bytes, str]:
    """The bytes of one MIME type of an output, and the type to serve them as."""
    if output.get("output_type") == "error":
        lines = [str(line) for line in output.get("traceback", [])]
        if not lines:
            lines = [f"{output.get('ename', '')}: {output.get('evalue', '')}"]
        return strip_ansi("\n".join(lines)).encode("utf-8", "replace"), _TEXT
    data = output.get("data")
    if not isinstance(data, dict) or not data:
        raise NotFound("This output has no data.")
    if not mime:
        mime = max(data, key=lambda kind: value_size(data[kind]))
    if mime not in data:
        raise NotFound(f"This output has no '{mime}' data; it has {', '.join(sorted(data))}.")
    value = data[mime]
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        value = "".join(value)
    if not isinstance(value, str):
        return json.dumps(value).encode(), "application/json"
    if mime in _BINARY or mime.startswith(("audio/", "video/")):
        try:
            return base64.b64decode(value), mime
        except (binascii.Error, ValueError) as e:
            raise NotFound(f"The '{mime}' data of this output is not valid base64.") from e
    shown = mime if mime in _SHOWN_AS_IS else "text/plain"
    return value.encode("utf-8", "replace"), f"{shown}; charset=utf-8"


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    ident = f"({NAME_PATTERN})"
    return [(rf"/{OUTPUTS_PATH}/{ident}/{ident}/{ident}(?:/([0-9]+))?", FullOutputHandler)]
