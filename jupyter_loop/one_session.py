"""One session, and so one kernel, per notebook, however many clients ask at once.

jupyter_server's ``POST /api/sessions`` looks for a session of the path and, finding none,
starts a kernel, recording the session only once the kernel is up (tens of milliseconds,
seconds on a gateway). Two requests in that window each start a kernel. A browser's
session context asks once per notebook, so stock JupyterLab rarely meets it; jupyter-loop
adds clients that start a notebook's kernel on their own (``jupyter loop run``, scripts
through ``POST runs``' callers, MCP's agents with a tab opening meanwhile), and it runs a
notebook's cells on its session's kernel: two kernels meant a cell run on each at once,
their lines interleaved in the one cell, and variables split between them (chaos seed 2029,
trial 110).

Here creating a notebook's session is serialized per path, and a request that finds the
session made meanwhile gets that session (what the handler answers when it exists already).
Other kinds of session (consoles) and requests naming a kernel are left as they are.

Rejected: refusing the second request (a 409): the handler itself would have returned the
existing session had it looked a moment later, and clients expect a session back.

Example:
    >>> from jupyter_server.services.sessions.sessionmanager import SessionManager
    >>> with_one_session(SessionManager).__mro__[1] is OneSessionPerNotebook
    True
    >>> with_one_session(with_one_session(SessionManager)).__name__
    'SessionManager'
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar, cast

from jupyter_server.utils import ensure_async

Manager = TypeVar("Manager")


class OneSessionPerNotebook:
    """Put over a session manager (first in its bases, so that a subclass's own
    ``create_session`` runs inside the lock)."""

    async def create_session(
        self,
        path: str | None = None,
        name: str | None = None,
        type: str | None = None,
        kernel_name: str | None = None,
        kernel_id: str | None = None,
    ) -> dict[str, Any]:
        create = super().create_session  # type: ignore[misc]
        if type != "notebook" or not path or kernel_id is not None:
            return cast(
                "dict[str, Any]",
                await create(
                    path=path, name=name, type=type, kernel_name=kernel_name, kernel_id=kernel_id
                ),
            )
        locks: dict[str, asyncio.Lock] = self.__dict__.setdefault("_loop_creating", {})
        async with locks.setdefault(path, asyncio.Lock()):
            manager: Any = self
            if await ensure_async(manager.session_exists(path=path)):
                return cast("dict[str, Any]", await manager.get_session(path=path))
            return cast(
                "dict[str, Any]",
                await create(path=path, name=name, type=type, kernel_name=kernel_name),
            )


def with_one_session(manager: type[Manager]) -> type[Manager]:
    """``manager`` with :class:`OneSessionPerNotebook` over it (named as the original)."""
    if issubclass(manager, OneSessionPerNotebook):
        return manager
    derived = type(manager.__name__, (OneSessionPerNotebook, manager), {"__module__": __name__})
    return cast("type[Manager]", derived)


def give_one_session(manager: Any) -> None:
    """Make the server's session manager one of :func:`with_one_session`'s classes.

    Done on the instance, once the server has made it: which class it makes is decided in
    ``init_configurables`` (the gateway's session manager when a gateway is configured),
    after extensions are linked. Rejected: setting ``ServerApp.session_manager_class`` at
    link time, when its default cannot be read yet (it asks the gateway's settings, not
    made until then), and guessing the gateway's settings ourselves.
    """
    manager.__class__ = with_one_session(type(manager))
