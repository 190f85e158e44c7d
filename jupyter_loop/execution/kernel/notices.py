"""Telling a kernel's open notebooks that it began a new life, through their documents.

A tab marks outputs "kernel restarted since this output" from the server's answer
(``GET stale``), which it asks for when its kernel's status changes. But a tab's kernel
connection does not reliably hear of a restart made elsewhere (the REST API, another tab,
the CLI): the new process's first status can be lost to a connection still joining it,
and the statuses of the server's own requests to the new process need not reach it. In a
browser test two tabs watched one REST restart; in 2 of 6 runs one of them heard no
status at all, and its marks stayed as they were before the restart.

The server always hears of a new life (the restart action, the restarter, the liveness
check, a gateway's word: ``lives``). It writes the new life into each open
notebook whose session has that kernel, after the line took it on, so a tab that sees the
write and asks again is answered with the new marks.

Rejected: tabs asking on a timer. A request per tab per notebook every few seconds, for an
event that comes a few times a day, and still late by up to a period.
"""

from __future__ import annotations

import logging
from typing import Any

from ...document.live import LiveDocuments
from ...tasks import BackgroundTasks
from ..board import note_kernel_life


class KernelLifeNotices:
    """Writes a kernel's new life into the open notebooks of its sessions.

    Args:
        docs: The live notebooks (only rooms already in memory are written: a notebook
            with no room has no tab to tell).
        session_manager: jupyter_server's sessions, which say which notebook has which
            kernel.
    """

    def __init__(self, docs: LiveDocuments, session_manager: Any, log: logging.Logger) -> None:
        self._docs = docs
        self._sessions = session_manager
        self._tasks = BackgroundTasks(log)

    def began_anew(self, kernel_id: str, kernel_run: str) -> None:
        """The kernel ``kernel_id`` began the life ``kernel_run`` (see ``KernelLine``)."""
        self._tasks.spawn(self._tell(kernel_id, kernel_run), "telling tabs of a kernel restart")

    async def _tell(self, kernel_id: str, kernel_run: str) -> None:
        for session in await self._sessions.list_sessions():
            kernel = session.get("kernel") or {}
            path = session.get("path")
            if kernel.get("id") != kernel_id or not path:
                continue
            loaded = self._docs.loaded_room(str(path))
            if loaded is None:
                continue
            async with self._docs.edit(loaded[0]) as notebook:
                note_kernel_life(notebook, kernel_run)

    async def stop(self, timeout: float = 3.0) -> None:
        await self._tasks.close(timeout)
