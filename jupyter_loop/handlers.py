"""What every REST handler of the extension shares: its namespace, who is asking
(:mod:`.access.identity`), the request body as a JSON object, and service errors as HTTP statuses.

Each feature's own handlers and route table live in its package (``execution/handlers.py``,
``agent/handlers.py``, ...); a handler there parses, calls one service, and finishes.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.base.handlers import APIHandler

from .access.identity import principal_of, user_name_of
from .access.rights import Grants, grants_of
from .errors import BadRequest, JupyterLoopError

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


class LoopHandler(APIHandler):
    """Maps service errors to HTTP statuses with the service's message."""

    def body_object(self) -> dict[str, Any]:
        return parse_json_object(self.request.body)

    def user_name(self) -> str:
        """Who made the request, as people know them (:func:`.access.identity.user_name_of`)."""
        return user_name_of(self)

    async def grants(self) -> Grants:
        """What this request's user may do (every right of :mod:`.access.rights`, asked once)."""
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
