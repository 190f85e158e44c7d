"""REST handlers: parse, call one service, finish. The route table is at the bottom."""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.base.handlers import APIHandler
from tornado import web

from .errors import JupyterLoopError
from .execution.service import ExecutionService
from .payloads import InputReply, RunRequest, parse_json_object
from .rights import Ability, Grants, grants_of, requires

NAMESPACE = "jupyter-loop"


def name_of(user: Any) -> str:
    """A Jupyter user as people know them (not an anonymous user's random id)."""
    for attribute in ("display_name", "name", "username"):
        value = getattr(user, attribute, None)
        if value:
            return str(value)
    return "anonymous"


SERVER_TOKEN_PRINCIPAL = "holder of the server's token"


def principal_of(handler: Any) -> str:
    """Who holds the request's credential: what sessions and allowances belong to.

    A Jupyter user's unique ``username`` (not the display name, which two people may share),
    except for a request carrying the server's own shared token: Jupyter names each of
    those after a random moon unless a cookie says otherwise, but they are all one holder
    of one credential (rejected: the moon's name, which changes with every cookie-less
    request, so an MCP client that keeps no cookies would lose its session at once).
    """
    token = getattr(handler, "token", None)
    if token and handler.identity_provider.get_token(handler) == token:
        return SERVER_TOKEN_PRINCIPAL
    user = handler.current_user
    value = getattr(user, "username", None) or getattr(user, "name", None)
    return f"user {value}" if value else "anonymous"


class LoopHandler(APIHandler):
    """Maps service errors to HTTP statuses with the service's message."""

    def body_object(self) -> dict[str, Any]:
        return parse_json_object(self.request.body)

    def user_name(self) -> str:
        """Who made the request, as people know them (not an anonymous user's random id)."""
        return name_of(self.current_user)

    async def grants(self) -> Grants:
        """What this request's user may do (every right of :mod:`.rights`, asked once)."""
        return await grants_of(self, self.user_name(), principal_of(self))

    def reply(self, payload: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(payload))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(error, JupyterLoopError):
            self.set_status(error.status)
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps(error.to_json()))
            return
        super().write_error(status_code, **kwargs)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, JupyterLoopError):
            self.log.info("jupyter-loop %s: %s", type(value).__name__, value.message)
            return
        super().log_exception(typ, value, tb)


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
