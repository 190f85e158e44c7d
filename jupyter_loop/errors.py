"""Errors the services raise; handlers turn them into HTTP statuses at the edge."""

from __future__ import annotations


class JupyterLoopError(Exception):
    """Base error, carrying the HTTP status a request that caused it should get."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_json(self) -> dict[str, str]:
        """What a client is told: the message, and the kind of error as ``reason``."""
        return {"message": self.message, "reason": type(self).__name__}


class BadRequest(JupyterLoopError):
    status = 400


class Forbidden(JupyterLoopError):
    """A rule of the server's administrator refuses the request (not the user's rights,
    which jupyter_server's authorizer answers with its own 403)."""

    status = 403


class NotFound(JupyterLoopError):
    status = 404


class Conflict(JupyterLoopError):
    """The request is valid but the current state forbids it (no kernel, already answered)."""

    status = 409


class SourceChanged(Conflict):
    """Cells changed since a user saw (and approved) them: they were not run."""

    def __init__(self, cell_ids: list[str]) -> None:
        names = ", ".join(f"'{cell_id}'" for cell_id in cell_ids)
        super().__init__(f"Cell {names} changed since it was approved; nothing was run.")
        self.cell_ids = cell_ids


class Unavailable(JupyterLoopError):
    """A collaborator the request needs (collaboration extension, kernel) is not there."""

    status = 503
