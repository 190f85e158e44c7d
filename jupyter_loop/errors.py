"""Errors the services raise; handlers turn them into HTTP statuses at the edge."""

from __future__ import annotations


class JupyterLoopError(Exception):
    """Base error, carrying the HTTP status a request that caused it should get."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(JupyterLoopError):
    status = 400


class NotFound(JupyterLoopError):
    status = 404


class Conflict(JupyterLoopError):
    """The request is valid but the current state forbids it (no kernel, already answered)."""

    status = 409


class Unavailable(JupyterLoopError):
    """A collaborator the request needs (collaboration extension, kernel) is not there."""

    status = 503
