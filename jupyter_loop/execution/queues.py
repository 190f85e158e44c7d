"""Every kernel's queue: one per kernel, made when a cell first runs on it, and told what
happens to its kernel (a restart or death its manager sees, Jupyter's interrupt, restart
and shutdown actions).

The service asks for a kernel's queue by id; the queue outlives any one request, and a
shut-down kernel's queue ends its runs and goes.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from ..document import LiveDocuments
from .kernel_notices import KernelLifeNotices
from .ledger import RunLedger
from .queue import KernelQueue, QueueSettings

KERNEL_ACTIONS = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"
"""jupyter_server's event for a kernel action a client asked for (interrupt, restart, …)."""


class KernelQueues:
    """The queues of this server's kernels, by kernel id."""

    def __init__(
        self,
        kernel_manager: Any,
        docs: LiveDocuments,
        settings: QueueSettings,
        log: logging.Logger,
        ledger: RunLedger,
        notices: KernelLifeNotices,
    ) -> None:
        self._kernels = kernel_manager
        self._docs = docs
        self._settings = settings
        self._log = log
        self._ledger = ledger
        self._notices = notices
        self._queues: dict[str, KernelQueue] = {}
        self._watched: set[str] = set()

    def get(self, kernel_id: str) -> KernelQueue | None:
        """The kernel's queue, if a cell ran on it."""
        return self._queues.get(kernel_id)

    def of(self, kernel_id: str) -> KernelQueue:
        """The kernel's queue, made (and its kernel watched) on first use."""
        queue = self._queues.get(kernel_id)
        if queue is None:
            manager = self._kernels.get_kernel(kernel_id)
            queue = KernelQueue(
                kernel_id,
                manager,
                self._docs,
                self._settings,
                self._log,
                self._ledger,
                on_new_life=partial(self._notices.began_anew, kernel_id),
            )
            self._queues[kernel_id] = queue
            self._watch(kernel_id, manager)
        return queue

    def all(self) -> list[KernelQueue]:
        return list(self._queues.values())

    def take_all(self) -> list[KernelQueue]:
        """Every queue, forgotten here (the server stops: the caller ends them)."""
        queues = self.all()
        self._queues.clear()
        return queues

    def _watch(self, kernel_id: str, manager: Any) -> None:
        if kernel_id in self._watched:
            return
        self._watched.add(kernel_id)

        def restarted() -> None:
            if (queue := self._queues.get(kernel_id)) is not None:
                queue.line.restarter_restarts()

        def died() -> None:
            if (queue := self._queues.get(kernel_id)) is not None:
                queue.line.kernel_died()

        # A gateway kernel has no restarter here (these never fire): its connection
        # reports a death instead (see ``kernel.KernelChannel``).
        manager.add_restart_callback(restarted, "restart")
        manager.add_restart_callback(died, "dead")

    async def on_kernel_action(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        """A :data:`KERNEL_ACTIONS` event: an interrupt drops the queued cells, a restart
        ends the runs of the old life, a shutdown ends them all and the queue goes."""
        kernel_id = str(data.get("kernel_id", ""))
        queue = self._queues.get(kernel_id)
        if queue is None or data.get("status") != "success":
            return
        action = data.get("action")
        if action == "interrupt":
            await queue.drop_queued()
        elif action == "restart":
            await queue.line.restart_done()
        elif action == "shutdown":
            self._queues.pop(kernel_id, None)
            await queue.stop("The kernel was shut down while this cell ran.")
            self._watched.discard(kernel_id)
