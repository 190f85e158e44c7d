"""REST handlers of inline completions (``/api/jupyter-loop/completion/...``).

``POST .../stream`` answers with newline-delimited JSON as the model streams: ``{"text":
...}`` lines, then ``{"done": true, "error": null | message}``. A client that aborts the
request (typing on) closes the connection; the handler then cancels the model call.
Completing reads a notebook's cells and outputs: ``read`` on ``contents``. The route table
is at the bottom.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tornado import web
from tornado.iostream import StreamClosedError

from ..access.rights import Ability, requires
from ..assistant_services import AssistantHandler
from ..handlers import NAMESPACE, LoopHandler
from .payloads import CompletionRequest

if TYPE_CHECKING:
    from .service import CompletionJob, CompletionService


class CompletionHandler(AssistantHandler):
    @property
    def completion(self) -> CompletionService:
        return self.assistant.completion


class StreamHandler(CompletionHandler):
    _job: CompletionJob | None = None

    @web.authenticated
    @requires(Ability.READ)
    async def post(self) -> None:
        request = CompletionRequest.from_json(self.body_object())
        grants = await self.grants()  # the kernel's variables need the kernel rights
        self._job = job = await self.completion.start(
            request, grants.allows(Ability.VARIABLES), grants.principal
        )
        self.set_header("Content-Type", "application/x-ndjson; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        try:
            async for chunk in job.chunks():
                self.write(json.dumps(chunk.to_json(), ensure_ascii=False) + "\n")
                await self.flush()
        except StreamClosedError:
            job.cancel()
            return
        self.finish()

    def on_connection_close(self) -> None:
        if self._job is not None:
            self._job.cancel()
        super().on_connection_close()


class StatusHandler(CompletionHandler):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        self.reply(self.completion.status())


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    base = rf"/api/{NAMESPACE}/completion"
    return [
        (rf"{base}/stream", StreamHandler),
        (rf"{base}/status", StatusHandler),
    ]
