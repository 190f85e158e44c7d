"""What every REST handler of the extension shares: its namespace, who is asking, the
request body as a JSON object, and service errors as HTTP statuses.

Each feature's own handlers and route table live in its package (``execution/handlers.py``,
``agent/handlers.py``, ...); a handler there parses, calls one service, and finishes.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.base.handlers import APIHandler

from .errors import BadRequest, JupyterLoopError
from .rights import Grants, grants_of

NAMESPACE = "jupyter-loop"


def parse_json_object(body: bytes) -> dict[str, Any]:
    """Decode a request body that must be a JSON object of valid text.

    Refused: nesting deeper than Python's recursion limit, and lone surrogates such as
    ``"\\ud800"`` (valid JSON, but no text can be written or encoded with one).
    """
    try:
        value = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"The request body is not valid JSON: {e}") from e
    except RecursionError as e:
        raise BadRequest("The request body is nested too deeply.") from e
    if not isinstance(value, dict):
        raise BadRequest("The request body must be a JSON object.")
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        raise BadRequest("The request body holds invalid text (a lone surrogate).") from e
    except RecursionError as e:
        raise BadRequest("The request body is nested too deeply.") from e
    return value


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
