"""The MCP endpoint's door, ``{base_url}api/jupyter-loop/mcp``: a Tornado handler that
authenticates the request like any Jupyter API request, or with a scoped token (the one
place that takes them), asks the authorizer for the caller's rights once, and hands the
request to :class:`~.endpoint.McpEndpoint`, which speaks MCP. Its refusals are what MCP
clients read (:mod:`.discovery`): a JSON-RPC error body, and ``401`` with a challenge
whenever the request has no valid credential (Jupyter says ``403`` for some of those).
"""

from __future__ import annotations

import json
import re
from http.client import responses
from typing import TYPE_CHECKING, Any

from tornado import web

from ..access.rights import Ability, Grants, grants_of, requires
from ..access.tokens import PREFIX as TOKEN_PREFIX
from ..access.tokens import SCOPES, AccessToken, AccessTokens
from ..assistant_services import SETTING as ASSISTANT
from ..errors import JupyterLoopError
from ..handlers import LoopHandler
from . import discovery
from .bridge import TornadoExchange
from .sessions import SESSION_HEADER

if TYPE_CHECKING:
    from ..assistant_services import Assistant
    from .endpoint import McpEndpoint

_AUTHORIZATION = re.compile(r"(?:token|bearer)\s+(\S+)", re.IGNORECASE)
NEEDS_READ = "Using the MCP endpoint needs permission to read contents."
NEEDS_TOKEN = (
    "A valid Jupyter token is required: send 'Authorization: token <token>' (the server's "
    "or your JupyterHub token), or a jupyter-loop token as 'Authorization: Bearer jlt_…'."
)


def _bearer(header: str) -> str:
    """The token of an ``Authorization: Bearer|token X`` header (``""``: none)."""
    found = _AUTHORIZATION.fullmatch(header.strip())
    return found.group(1) if found else ""


class McpHandler(LoopHandler):
    """Authenticates like any Jupyter API request, or with a scoped token (the one place
    that takes them), then lets the SDK answer."""

    _exchange: TornadoExchange | None = None
    _scoped: AccessToken | None = None

    async def prepare(self) -> None:  # type: ignore[override]
        sent = _bearer(self.request.headers.get("Authorization", ""))
        if sent.startswith(TOKEN_PREFIX):
            self._prepare_scoped(sent)
            return
        try:
            await super().prepare()
        except web.HTTPError as e:
            if e.status_code == 403 and not self.current_user:
                # Jupyter answers 403; an MCP client needs 401 to know it lacks credentials.
                raise web.HTTPError(401, NEEDS_TOKEN) from None
            raise

    def _prepare_scoped(self, sent: str) -> None:
        """What Jupyter's ``prepare`` does for a token it knows (host check, CORS, the
        user), for a scoped token: a header token needs no XSRF check, as Jupyter's own."""
        from jupyter_server import CallContext
        from jupyter_server.auth.identity import User

        CallContext.set(CallContext.JUPYTER_HANDLER, self)
        if not self.check_host():
            raise web.HTTPError(403)
        tokens: AccessTokens = self.settings["jupyter_loop_tokens"]
        token = tokens.check(sent)
        if token is None:
            raise web.HTTPError(401, "This jupyter-loop token is unknown, revoked or expired.")
        self._scoped = token
        owner = token.owner  # the authorizer is asked about the token's maker
        self._token_authenticated = True
        user = User(owner.username, name=owner.name, display_name=owner.name)
        self.current_user = self._jupyter_current_user = user
        self.set_cors_headers()
        if not self.check_origin():
            raise web.HTTPError(404)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Every refusal as a JSON-RPC error, so MCP clients show its words; a request
        without a valid credential gets ``401`` and the challenge, whatever refused it."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(error, JupyterLoopError):
            status_code, message = error.status, error.message
        elif isinstance(error, web.HTTPError):
            message = error.log_message or responses.get(status_code, "Error")
        else:
            message = "Internal error of the MCP endpoint; the server's log says more."
        if status_code == 403 and getattr(self, "_jupyter_current_user", None) is None:
            status_code, message = 401, NEEDS_TOKEN  # Jupyter's 403 for "no user"
        self.set_status(status_code, discovery.reason_phrase(message) or None)
        if status_code == 401:
            self.set_header("WWW-Authenticate", discovery.challenge(self))
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(discovery.jsonrpc_error(status_code, message)))

    def user_name(self) -> str:
        return self._scoped.owner.name if self._scoped is not None else super().user_name()

    async def grants(self) -> Grants:
        """The request's rights; a scoped token's, at most its scope's and its maker's."""
        token = self._scoped
        if token is None:
            return await super().grants()
        principal = f"token {token.id} of {token.owner.principal}"
        made = await grants_of(self, token.owner.name, principal)
        granted = made.granted & SCOPES[token.scope]
        return Grants(made.user, principal, granted, token.notebook, token.scope)

    async def endpoint(self) -> McpEndpoint:
        assistant: Assistant = self.settings[ASSISTANT]
        return (await assistant.ready()).mcp

    async def _serve(self) -> None:
        grants = await self.grants()  # each tool call is checked against these
        self._exchange = TornadoExchange(self)
        session_id = self.request.headers.get(SESSION_HEADER, "")
        endpoint = await self.endpoint()
        agent = (self._scoped.agent if self._scoped is not None else None) or ""
        await endpoint.serve(self._exchange, grants, self.request.method or "", session_id, agent)

    @web.authenticated
    @requires(Ability.READ, message=NEEDS_READ)
    async def post(self) -> None:
        await self._serve()

    @web.authenticated
    @requires(Ability.READ, message=NEEDS_READ)
    async def get(self) -> None:
        await self._serve()

    @web.authenticated
    @requires(Ability.READ, message=NEEDS_READ)
    async def delete(self) -> None:
        await self._serve()

    def on_connection_close(self) -> None:
        if self._exchange is not None:
            self._exchange.closed.set()


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [(f"/{discovery.ENDPOINT}", McpHandler), *discovery.route_table()]
