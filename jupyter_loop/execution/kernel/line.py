"""One kernel's line: the connection its queue talks to it through, across its lives.

A kernel keeps its id when it dies and is restarted; its connection does not outlive the
process. The line holds the connection to the process of now, checks it is alive while
a cell runs, and hears the words of a death (the liveness check, jupyter_client's
restarter, the server's restart action, a gateway on IOPub). The first word of a death
(``lives`` says which) ends the runs on the line: the cell the kernel ran is cut
off, those handed after it never ran, the queue behind them is emptied, and the next
cell goes to a new connection.

The queue owns the line and hands cells through it (:attr:`KernelLine.channel`); the line
ends the queue's runs through :class:`LineRuns`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from ...tasks import BackgroundTasks
from ..run import KERNEL_DIED, KERNEL_RESTARTED, RunOutcome
from .connection import KernelChannel
from .lives import KernelLives
from .silent_read import SilentReads

_Said = TypeVar("_Said")


class LineRuns(Protocol):
    """What the end of a kernel's life does to the runs on its line (``queue.KernelQueue``)."""

    def end_handed(self, note: str | None) -> None:
        """End the runs handed to the kernel: the one it ran is cut off (with ``note``),
        those handed after it never ran."""

    async def drop_queued(self, queued_by: float | None = None) -> None:
        """Forget the cells still waiting (all of them, without ``queued_by``)."""

    def any_sent(self) -> bool:
        """Whether a run not ended yet was sent to the kernel (or followed on it)."""


class KernelLine:
    """The connection to one kernel, replaced as each of its lives ends.

    Args:
        runs: The runs on this line (the queue that owns it), ended with a life.
        tasks: Where the ends of a lost kernel's runs run: the queue's, which its stop
            awaits before it closes the cell writers.
        ready_timeout: Seconds a connection waits for the kernel to answer.
        liveness_interval: Seconds between two checks that a running cell's kernel lives.
        on_new_life: Called with the kernel's new life once the line took it on (tabs are
            told: ``notices``).
    """

    def __init__(
        self,
        kernel_id: str,
        kernel_manager: Any,
        log: logging.Logger,
        runs: LineRuns,
        tasks: BackgroundTasks,
        *,
        ready_timeout: float,
        liveness_interval: float,
        on_new_life: Callable[[str], None] | None = None,
    ) -> None:
        self.kernel_id = kernel_id
        self._manager = kernel_manager
        self._log = log
        self._runs = runs
        self._tasks = tasks
        self._ready_timeout = ready_timeout
        self._liveness_interval = liveness_interval
        self._channel = KernelChannel(kernel_manager, log, on_lost=self._gateway_says)
        self._lives = KernelLives()
        self._on_new_life = on_new_life
        self._silent_reads = SilentReads()

    @property
    def channel(self) -> KernelChannel:
        """The connection to the kernel's process of now (a new one once it ended)."""
        return self._channel

    @property
    def kernel_run(self) -> str:
        """This start of the kernel (see ``KernelLives.kernel_run``)."""
        return self._lives.kernel_run

    # -- connecting ------------------------------------------------------------------

    async def ready(self) -> None:
        """Connect, and wait until the kernel answers: whatever restarted it, it lives."""
        await self._channel.ready(self._ready_timeout)
        self._lives.running()

    async def connect(self) -> None:
        """Connect to a kernel that may be running a cell (see ``KernelQueue.follow``)."""
        await self._channel.ready(self._ready_timeout, busy=True)

    # -- silent reads ----------------------------------------------------------------

    @property
    def reading(self) -> bool:
        """A silent request is in the kernel, or on its way there."""
        return self._silent_reads.reading

    async def evaluate(self, expressions: dict[str, str], timeout: float) -> dict[str, Any]:
        """The ``user_expressions`` of a silent execute request (see ``silent_read``)."""
        return await self._silent_reads.read(self._channel, self.ready, expressions, timeout)

    # -- the liveness check ----------------------------------------------------------

    async def outcome_of(self, done: asyncio.Future[RunOutcome]) -> RunOutcome:
        """How a run ended (``done``: its end); meanwhile the kernel is checked every
        ``liveness_interval`` seconds, and a kernel found dead ends the runs handed to it."""
        while True:
            ended, _ = await asyncio.wait({done}, timeout=self._liveness_interval)
            if ended:
                return done.result()
            channel = self._channel
            # Replaced meanwhile: the kernel restarted and its runs were ended then.
            if not await channel.alive() and channel is self._channel:
                self._log.info("jupyter-loop: kernel %s found dead", self.kernel_id)
                self._hear(self._lives.found_dead)
                self._runs.end_handed(KERNEL_DIED)
                await self._replace_channel().close()

    # -- words of the kernel's death (which of them end runs: ``lives``) ------

    def restarter_restarts(self) -> None:
        """jupyter_client's restarter found the kernel dead and starts it again.

        A kernel that died before it ever answered us (one whose port another process
        took, say: its keeper ends it at its start), with no cell sent to it or followed
        on it, ran nothing: the cells waiting for it wait on, and the connection that
        waits finds the restarted kernel on its new ports. Rejected: ending them, as for
        a kernel that dies under a cell; the cell a user ran as the notebook opened then
        showed "the kernel died and was restarted while this cell ran" for a cell that
        never ran."""
        ends = self._hear(self._lives.restarter_restarts)
        if ends and not self._channel.connected and not self._runs.any_sent():
            self._log.info(
                "jupyter-loop: kernel %s died before it answered; its cells wait for its restart",
                self.kernel_id,
            )
            return
        self._end_if(ends, KERNEL_RESTARTED, "the restarter")

    def kernel_died(self) -> None:
        """The kernel died for good (its restarter gave up)."""
        self._end_if(self._hear(self._lives.died), KERNEL_DIED, "the restarter (gave up)")

    async def restart_done(self) -> None:
        """The server restarted the kernel (asked for, or its restarter's)."""
        ended = self._hear(self._lives.restart_done)
        self._log.info("jupyter-loop: kernel %s restarted (ends runs: %s)", self.kernel_id, ended)
        if ended:
            await self.end_all(None)

    def _gateway_says(self, state: str) -> None:
        # A gateway's word on IOPub: "restarting" (it restarted the kernel) or "dead".
        if state == "restarting":
            self._end_if(self._hear(self._lives.gateway_restarted), KERNEL_RESTARTED, "the gateway")
        else:
            self._end_if(self._hear(self._lives.died), KERNEL_DIED, "the gateway (dead)")

    def _hear(self, word: Callable[[], _Said]) -> _Said:
        """Give the kernel's lives a word of a death; a new life it begins is told on."""
        life = self._lives.kernel_run
        said = word()
        if self._lives.kernel_run != life and self._on_new_life is not None:
            self._on_new_life(self._lives.kernel_run)
        return said

    def _end_if(self, ended: bool, note: str, said_by: str) -> None:
        self._log.info(
            "jupyter-loop: kernel %s lost, says %s (ends runs: %s)", self.kernel_id, said_by, ended
        )
        if ended:
            self._tasks.spawn(self.end_all(note), "ending the runs of a dead kernel")

    async def end_all(self, note: str | None) -> None:
        """The kernel restarted or died: end the running cell and empty the queue.

        All three happen before the first ``await``: a cell run again the moment its
        marker says "aborted" must find the new connection, not the one to the dead
        process (still closing, it would take the request and never answer)."""
        old = self._replace_channel()
        self._runs.end_handed(note)
        await self._runs.drop_queued()  # which empties the queue before it first awaits
        self._silent_reads.forget()
        await old.close()

    def _replace_channel(self) -> KernelChannel:
        """A new connection for the runs from now on; the old one, for the caller to close.
        Display ids and the connection belong to the old kernel process."""
        old = self._channel
        self._channel = KernelChannel(self._manager, self._log, on_lost=self._gateway_says)
        return old

    async def close(self) -> None:
        """The queue stopped: no reply to a silent read will come, the connection closes."""
        self._silent_reads.forget()
        await self._channel.close()
