"""Two users on one test server (``ServerApp.identity_provider_class``).

The server's own token is user ``ada``; ``Authorization: token`` :data:`BOB_TOKEN` is user
``bob``. Jupyter names a token's user after a random moon otherwise (one per cookie jar).
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.identity import IdentityProvider, User

BOB_TOKEN = "bob-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
BOB = {"Authorization": f"token {BOB_TOKEN}"}


class AdaAndBob(IdentityProvider):
    async def get_user_token(self, handler: Any) -> User | None:
        if self.get_token(handler) == BOB_TOKEN:
            return User(username="bob", name="bob", display_name="bob")
        return await super().get_user_token(handler)

    def generate_anonymous_user(self, handler: Any) -> User:
        return User(username="ada", name="ada", display_name="ada")
