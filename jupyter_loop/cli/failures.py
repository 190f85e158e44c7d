"""How ``jupyter loop`` ends when something goes wrong: one line, and an exit status per kind.

A user who mistypes a cell number, names a notebook the server does not have or pipes the
output into ``head`` needs to read what is wrong and what to do, not a 50-line traceback
of the client's insides; a script needs to tell "no such notebook" from "no server" by the
exit status. The traceback is still there for a bug report, with ``--debug``.
"""

from __future__ import annotations

EXIT_STATUSES = {
    "ok": 0,
    "failed": 1,  # a cell or the agent's turn failed
    "usage": 2,  # a bad argument: no such cell, a version that is not a number
    "not found": 3,  # no such notebook, version, approval, proposal or token on the server
    "refused": 4,  # the server refused the token (401/403)
    "no server": 5,  # no server running, or it cannot be reached, or it went away
    "server said no": 6,  # any other refusal (400, 409) or a server error (5xx)
    "internal": 70,  # a bug of the client: run again with --debug and report it
    "detached": 130,  # Ctrl-C (twice while a run is followed: it goes on on the server)
    "closed pipe": 141,  # the reader of the output went away (``| head``), as 128 + SIGPIPE
}
"""Exit statuses by kind; ``--help`` and docs/manual/mcp-and-terminal.md list them."""

EXIT_STATUS_HELP = (
    "Exit status: 0 all went well; 1 a cell or the turn failed; 2 a bad argument (no such "
    "cell, an option's value); 3 not found on the server (notebook, version, approval, "
    "proposal, token); 4 the server refused the token; 5 no server reached (or it went "
    "away); 6 the server refused the request otherwise (its reason is printed); 70 a bug "
    "of the client (--debug shows where); 130 Ctrl-C; 141 the output's reader closed the "
    "pipe. Errors are one line on stderr; --debug adds the traceback."
)


class CliError(Exception):
    """A failure to report to the user in one line; ``kind`` picks the exit status."""

    def __init__(self, message: str, kind: str = "usage") -> None:
        super().__init__(message)
        assert kind in EXIT_STATUSES, kind
        self.kind = kind

    @property
    def status(self) -> int:
        return EXIT_STATUSES[self.kind]


def kind_of_http_status(code: int) -> str:
    """Example:
    >>> [kind_of_http_status(c) for c in (404, 403, 401, 409, 500, 599)]
    ['not found', 'refused', 'refused', 'server said no', 'server said no', 'no server']
    """
    if code == 404:
        return "not found"
    if code in (401, 403):
        return "refused"
    if code == 599:  # tornado's own code: no answer (timeout, connection closed)
        return "no server"
    return "server said no"


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside exception groups (pycrdt's provider runs in a task group, so an
    error raised while a notebook's room is joined reaches ``main`` wrapped in one).

    Example:
        >>> class Group(Exception):  # as Python 3.11's ExceptionGroup holds them
        ...     def __init__(self, *errors):
        ...         self.exceptions = errors
        >>> [type(e).__name__ for e in leaves(Group(ValueError(1), Group(KeyError(2))))]
        ['ValueError', 'KeyError']
    """
    # By its ``exceptions``: ``BaseExceptionGroup`` is a builtin from Python 3.11 only (on
    # 3.10 anyio raises the ``exceptiongroup`` backport's).
    inner = getattr(error, "exceptions", None)
    if isinstance(inner, tuple) and all(isinstance(e, BaseException) for e in inner):
        return [leaf for e in inner for leaf in leaves(e)]
    return [error]


def explain(error: BaseException) -> CliError:
    """The one-line report of ``error``: our own :class:`CliError` first (the error the
    client meant to give, when a dropped connection followed it in the same group)."""
    found = leaves(error)
    for leaf in found:
        if isinstance(leaf, CliError):
            return leaf
    for leaf in found:
        if isinstance(leaf, BrokenPipeError):
            return CliError("the output's reader closed the pipe", "closed pipe")
    for leaf in found:
        if isinstance(leaf, KeyboardInterrupt):
            return CliError("interrupted", "detached")
    for leaf in found:
        if _is_closed_connection(leaf):
            return CliError(
                "The server closed the connection (it stopped, or restarted): "
                "start it again, or check its log.",
                "no server",
            )
    leaf = found[0]
    return CliError(
        f"unexpected {type(leaf).__name__}: {leaf} (run again with --debug for the "
        "traceback, and report it)",
        "internal",
    )


def _is_closed_connection(error: BaseException) -> bool:
    # By name: tornado is imported only by the commands that talk to the server.
    names = {cls.__name__ for cls in type(error).__mro__}
    return bool(names & {"WebSocketClosedError", "StreamClosedError", "ConnectionError"})
