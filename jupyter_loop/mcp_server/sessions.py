"""Which MCP sessions this server made, and for whom: the only session ids worth trusting.

The ``mcp-session-id`` header is whatever the client sends. The SDK checks it against the
sessions it holds, and (with the caller in the ASGI scope as ``user``,
:func:`scope_user`) against the one who opened the session; but a request of the
2026 protocol (no handshake, no server session) carries the header to the tools unchecked.
An approval's "allow for the turn" must hold only for the session a person allowed, so it
is keyed by a session id *this server minted* for *this principal* (:meth:`McpSessions.
validated`), else by nothing (then "for the turn" lasts for the one call). Rejected: the
SDK's private session table (``_server_instances``): it may change without notice.

Example:
    >>> sessions = McpSessions(limit=2)
    >>> sessions.minted("s1", "user ada")
    >>> sessions.validated("s1", "user ada"), sessions.validated("s1", "user bob")
    ('s1', '')
    >>> sessions.validated("made-up", "user ada")
    ''
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the SDK's server half is imported with the first MCP request (endpoint.py)
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

SESSION_HEADER = "mcp-session-id"
ISSUER = "jupyter-server"
SESSION_LIMIT = 10_000
"""Session ids remembered at most (the oldest are forgotten; the SDK ends idle ones)."""


def scope_user(principal: str) -> AuthenticatedUser:
    """The caller as the SDK's session manager reads ``scope["user"]``: a session opened by
    one principal answers 404 to any other (the SDK's own check, as for OAuth clients)."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    token = AccessToken(
        token="",  # the credential stays with Jupyter; the SDK compares only who holds it
        client_id=principal,
        scopes=[],
        subject=principal,
        claims={"iss": ISSUER},
    )
    return AuthenticatedUser(token)


class McpSessions:
    """Session ids the SDK minted in answer to a principal's request, by that principal."""

    def __init__(self, limit: int = SESSION_LIMIT) -> None:
        self._owners: dict[str, str] = {}
        self._limit = limit

    def minted(self, session_id: str, principal: str) -> None:
        if session_id in self._owners:
            return
        self._owners[session_id] = principal
        while len(self._owners) > self._limit:
            del self._owners[next(iter(self._owners))]

    def ended(self, session_id: str, principal: str) -> None:
        if self._owners.get(session_id) == principal:
            del self._owners[session_id]

    def validated(self, session_id: str, principal: str) -> str:
        """``session_id`` if this server minted it for ``principal``, else ``""``."""
        return session_id if session_id and self._owners.get(session_id) == principal else ""
