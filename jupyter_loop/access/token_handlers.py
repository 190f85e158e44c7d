"""``/api/jupyter-loop/tokens``: scoped tokens for outside agents (see :mod:`.tokens`).

``GET tokens``: the caller's tokens (never the tokens themselves);
``POST tokens`` ``{scope, notebook?, expires_in?}``: a new token, shown in this reply only;
``DELETE tokens/ID``: revoke one.

These take the user's own credential, never a scoped token (only the MCP endpoint accepts
those), and a token's scope must be within what its creator may do: a user who may not run
cells gets a 403 for a ``run`` token.
"""

from __future__ import annotations

from tornado import web

from ..errors import BadRequest
from ..handlers import NAMESPACE, LoopHandler
from .identity import principal_of
from .rights import Ability, requires, right_name
from .tokens import SCOPES, AccessTokens, TokenOwner


def owner_of(handler: LoopHandler) -> TokenOwner:
    """Who a token made for this request's user belongs to (also an ACP session's)."""
    username = str(getattr(handler.current_user, "username", "") or handler.user_name())
    return TokenOwner(principal_of(handler), username, handler.user_name())


class TokensBase(LoopHandler):
    @property
    def tokens(self) -> AccessTokens:
        tokens: AccessTokens = self.settings["jupyter_loop_tokens"]
        return tokens

    def owner(self) -> TokenOwner:
        return owner_of(self)


class TokensHandler(TokensBase):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        self.reply({"tokens": [token.public() for token in self.tokens.listed(self.owner())]})

    @web.authenticated
    @requires(Ability.READ)
    async def post(self) -> None:
        body = self.body_object()
        scope, notebook, seconds = body.get("scope"), body.get("notebook"), body.get("expires_in")
        if not isinstance(scope, str) or scope not in SCOPES:  # a list is not hashable
            raise BadRequest(f"'scope' must be one of: {', '.join(SCOPES)}.")
        if notebook is not None and (not isinstance(notebook, str) or not notebook):
            raise BadRequest("'notebook' must be a notebook's path.")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
            raise BadRequest("'expires_in' must be a number of seconds.")
        lacking = sorted(SCOPES[scope] - (await self.grants()).granted)
        if lacking:
            names = ", ".join(right_name(right) for right in lacking)
            raise web.HTTPError(403, f"A '{scope}' token needs rights you do not have: {names}.")
        made, secret = self.tokens.create(self.owner(), scope, notebook, seconds)
        self.log.info("jupyter-loop: %s made %s token %s", self.user_name(), scope, made.id)
        self.reply({**made.public(), "token": secret}, status=201)


class TokenHandler(TokensBase):
    @web.authenticated
    @requires(Ability.READ)
    async def delete(self, token_id: str) -> None:
        self.tokens.revoke(self.owner(), token_id)
        self.log.info("jupyter-loop: %s revoked token %s", self.user_name(), token_id)
        self.set_status(204)
        self.finish()


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    base = rf"/api/{NAMESPACE}/tokens"
    return [(base, TokensHandler), (rf"{base}/([0-9a-f]{{1,32}})", TokenHandler)]
