"""The REST face of running cells: ``POST runs`` (and ``GET runs``, what is pending), and
``POST input``. Route table at the bottom; the runs socket is in :mod:`.run_socket`."""

from __future__ import annotations

from tornado import web

from ..access.rights import Ability, requires
from ..handlers import NAMESPACE, LoopHandler
from .payloads import InputReply, RunRequest
from .service import ExecutionService


class ExecutionHandler(LoopHandler):
    @property
    def execution(self) -> ExecutionService:
        return self.settings["jupyter_loop_execution"]


class RunsHandler(ExecutionHandler):
    @web.authenticated
    @requires(Ability.RUN)
    async def post(self) -> None:
        request = RunRequest.from_json(self.body_object())
        ticket = await self.execution.run(request, self.user_name())
        self.reply(ticket.to_json(), status=202)  # an idle kernel has the first cell already

    @web.authenticated
    @requires(Ability.SEE_KERNELS)
    async def get(self) -> None:
        path = self.get_query_argument("path", "")
        self.reply({"path": path, "cells": await self.execution.pending(path)})


class InputHandler(ExecutionHandler):
    @web.authenticated
    @requires(Ability.RUN)
    async def post(self) -> None:
        reply = InputReply.from_json(self.body_object())
        await self.execution.answer_input(reply)
        self.reply({"answered": reply.request_id})


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [
        (rf"/api/{NAMESPACE}/runs", RunsHandler),
        (rf"/api/{NAMESPACE}/input", InputHandler),
    ]
