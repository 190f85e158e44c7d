"""How an MCP client learns why it was refused and how to authenticate: refusals in the
JSON-RPC error shape, the ``401`` challenge, and the endpoint's OAuth Protected Resource
Metadata (RFC 9728).

MCP clients read an HTTP refusal's body only when it is a JSON-RPC error (the Python SDK
shows "Server returned an error response" for Jupyter's ``{"message": …}``), and look for
credentials where a ``WWW-Authenticate: Bearer resource_metadata="…"`` header points. The
metadata names the endpoint and the server's own login as where credentials come from; the
credential a client sends is still a Jupyter (or jupyter-loop scoped) token in the header.

Where it is published: RFC 9728 puts a resource's metadata at the host's root with the
resource's path appended (``/.well-known/oauth-protected-resource/<path>``); under a
JupyterHub the host's root is the Hub's, not this server's, so it is published under the
server's base URL instead (the same place when the base URL is ``/``), with the path and
without it, and the challenge names it whole, which is what MCP clients follow.

Example:
    >>> jsonrpc_error(401, "A Jupyter token is required.")["error"]
    {'code': -32001, 'message': 'A Jupyter token is required.'}
"""

from __future__ import annotations

import re
from typing import Any

from jupyter_server.auth.decorator import allow_unauthenticated
from jupyter_server.utils import url_path_join

from ..access.rights import requires
from ..handlers import NAMESPACE, LoopHandler

ENDPOINT = f"api/{NAMESPACE}/mcp"
"""The endpoint's path under the base URL."""
METADATA = ".well-known/oauth-protected-resource"

REASON_CHARS = 120
"""Of a refusal's first words, in the status line."""


def reason_phrase(message: str) -> str:
    """The status line's reason phrase for a refusal: its words up to the first ``:`` or
    ``.``, printable ASCII only (a status line is no place for anything else), so that a
    client that shows only the status (``Client error '401 …'``: the MCP Python SDK 1.x)
    shows the server's reason; ``""`` when nothing is left (the standard phrase then).

    >>> reason_phrase("A valid Jupyter token is required: send 'Authorization: token …'")
    'A valid Jupyter token is required'
    >>> reason_phrase("Forbidden\\r\\nX-Injected: 1")
    'Forbidden X-Injected'
    """
    first = re.split(r"[:.]", message, maxsplit=1)[0]
    shown = "".join(c if " " <= c <= "~" else " " for c in first)
    return " ".join(shown.split())[:REASON_CHARS]


_CODES = {400: -32600, 401: -32001, 403: -32003, 404: -32004, 405: -32601}
"""JSON-RPC codes for HTTP refusals: the spec's ``invalid request`` and ``method not
found``, and server-defined codes (-32000 to -32099) for the rest."""


def jsonrpc_error(status: int, message: str) -> dict[str, Any]:
    """A refusal's body as MCP clients read it (``id`` is null: the request was refused
    before its id was read)."""
    code = _CODES.get(status, -32603 if status >= 500 else -32000)
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


def _absolute(handler: LoopHandler, path: str) -> str:
    """``path`` (from the host's root) as the client reached this server."""
    request = handler.request
    return f"{request.protocol}://{request.host}{path}"


def metadata_url(handler: LoopHandler) -> str:
    return _absolute(handler, url_path_join(handler.base_url, METADATA, ENDPOINT))


def challenge(handler: LoopHandler) -> str:
    """The ``WWW-Authenticate`` header of a ``401``."""
    return f'Bearer resource_metadata="{metadata_url(handler)}"'


def resource_metadata(handler: LoopHandler) -> dict[str, Any]:
    """The endpoint's Protected Resource Metadata (RFC 9728, section 2)."""
    login = handler.settings.get("login_url") or url_path_join(handler.base_url, "login")
    return {
        "resource": _absolute(handler, url_path_join(handler.base_url, ENDPOINT)),
        "authorization_servers": [login if "://" in login else _absolute(handler, login)],
        "bearer_methods_supported": ["header"],
        "resource_name": "jupyter-loop notebooks (MCP)",
    }


class ResourceMetadataHandler(LoopHandler):
    """``GET {base_url}.well-known/oauth-protected-resource[/api/jupyter-loop/mcp]``."""

    @allow_unauthenticated  # what a client reads before it has a credential
    @requires()  # public: it says only where the endpoint and the login are
    async def get(self) -> None:
        self.reply(resource_metadata(self))


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    return [
        (f"/{METADATA}/{ENDPOINT}", ResourceMetadataHandler),
        (f"/{METADATA}", ResourceMetadataHandler),
    ]
