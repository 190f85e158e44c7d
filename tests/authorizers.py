"""Authorizers set into a test server's config (``ServerApp.authorizer_class``)."""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.authorizer import Authorizer


class NoContents(Authorizer):
    """Everything is allowed but the notebooks' contents (read or write)."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource != "contents"


class ReadOnlyContents(Authorizer):
    """Contents may be read, not written; everything else is allowed."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource != "contents" or action == "read"
