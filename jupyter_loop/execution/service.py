"""Server-side execution: the entry point the REST handlers (and the agent) call."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from functools import partial
from typing import Any

from jupyter_ydoc import YNotebook

from ..document import LiveDocuments, source_hash, writing
from ..errors import Conflict, JupyterLoopError, NotFound
from ..keeper.adoption import KeptKernels
from . import board
from .cell_marks import failure_note
from .durability.ledger import NullLedger, RunLedger
from .durability.process_boundary import ProcessBoundary
from .durability.restart import take_up_left_runs
from .full_outputs.store import OutputStore
from .kernel.introspect import EXPRESSION, EXPRESSION_KEY, VariablesReport, report_from_reply
from .kernel.notices import KernelLifeNotices
from .outputs.writer import OutputPolicy
from .payloads import InputReply, QueuedCell, RunRequest, RunTicket
from .queue import KernelQueue, QueueSettings
from .run import CellJob, RunOutcome
from .run_origin import RUNS_API, RunEntry, RunOrigin, stale_reason
from .run_request import cells_to_run, check_sources, jobs_for, mark, skipped
from .tab_sources import with_shown_sources

VARIABLES_TIMEOUT = 5.0
"""Seconds the variables snippet may take before the kernel counts as not answering."""
KERNEL_BUSY = "The kernel is busy running a cell; its variables can be read once it is idle."
KERNEL_ACTIONS = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"


class ExecutionService:
    """Queues cells on their notebook's kernel and keeps one queue per kernel."""

    def __init__(
        self,
        docs: LiveDocuments,
        kernel_manager: Any,
        session_manager: Any,
        event_logger: Any,
        settings: QueueSettings,
        log: logging.Logger,
        ledger: RunLedger | None = None,
        kept: KeptKernels | None = None,
    ) -> None:
        self._docs = docs
        self._kept = kept
        self._ledger = ledger or NullLedger()
        self._kernels = kernel_manager
        self._sessions = session_manager
        self._events = event_logger
        self._settings = settings
        self._log = log
        self._queues: dict[str, KernelQueue] = {}
        self._watched: set[str] = set()
        self._waits: set[asyncio.Task[dict[str, RunOutcome]]] = set()
        self._boundary = ProcessBoundary(self._ledger)
        self._notices = KernelLifeNotices(docs, session_manager, log)

    def start(self) -> None:
        self._events.add_listener(schema_id=KERNEL_ACTIONS, listener=self._on_kernel_action)

    async def recover(self) -> int:
        """Take up or end the runs a previous server process left in flight: runs on a
        kernel a keeper kept are followed again (see ``durability.kept_runs``), the others end (see
        ``durability.recovery``). Returns how many cells changed."""
        return await self._boundary.take_up(
            partial(
                take_up_left_runs,
                self._ledger,
                self._kept,
                self._kernels,
                self._queue,
                self._docs,
                self._settings.outputs,
                self._log,
                self._settings.history,
            )
        )

    async def recovered(self) -> None:
        """Wait until the runs a previous server left are followed again or ended (see
        ``durability.process_boundary``)."""
        await self._boundary.taken_up()

    def stopping(self, leaving: Collection[str] = frozenset()) -> None:
        """The server begins to stop: the runs in flight now stay listed through
        :meth:`stop`, whatever ends them before it (see ``durability.process_boundary``)."""
        self._boundary.stopping(leaving)

    async def stop(self, leaving: Collection[str] = frozenset()) -> None:
        """End every run (the server stops); runs on the kernels in ``leaving`` (kept
        running for the next server) are left in flight, for it to follow again."""
        self._events.remove_listener(schema_id=KERNEL_ACTIONS, listener=self._on_kernel_action)
        for waiting in list(self._waits):  # only the waits: the cells belong to the queues
            waiting.cancel()
        queues = list(self._queues.values())
        self._queues.clear()
        left = self._boundary.left_to_next(leaving)
        await asyncio.gather(
            *(queue.leave() if queue.kernel_id in leaving else queue.stop() for queue in queues),
            return_exceptions=True,
        )
        self._boundary.hand_over(left)
        await self._notices.stop()

    # -- requests --------------------------------------------------------------------

    async def run(
        self, request: RunRequest, user: str, origin: RunOrigin | None = None
    ) -> RunTicket:
        """Queue the cells; nothing changes if any of them is unknown. ``origin`` says who
        started them, through what, for the run history (default: the runs API for ``user``)."""
        ticket, _ = await self._queue_cells(request, user, origin)
        return ticket

    async def run_and_wait(
        self,
        request: RunRequest,
        user: str,
        wait: float | None = None,
        origin: RunOrigin | None = None,
    ) -> dict[str, RunOutcome]:
        """Queue the cells and wait until every one has run (or was dropped), or at most
        ``wait`` seconds: cells still running then are reported ``running`` and run on.

        Returns how each cell's run ended, by cell id (empty cells count as ``ok``). The
        waiting is the service's: a caller that stops waiting (a stopped turn, a client
        gone) leaves the cells running and their outcomes whole. Rejected: each channel
        keeping its own shielded tasks (two copies, one per agent, before).
        """
        task = asyncio.ensure_future(self._run_to_end(request, user, origin))
        self._waits.add(task)
        task.add_done_callback(self._waits.discard)
        if wait is None:
            return await asyncio.shield(task)
        done, _ = await asyncio.wait([asyncio.shield(task)], timeout=max(0.0, wait))
        if done:
            return task.result()
        note = f"still running after {wait:g} s"
        return {cell_id: RunOutcome("running", note=note) for cell_id in request.cell_ids}

    async def _run_to_end(
        self, request: RunRequest, user: str, origin: RunOrigin | None
    ) -> dict[str, RunOutcome]:
        ticket, waiting = await self._queue_cells(request, user, origin)
        outcomes = {cell.cell_id: RunOutcome("ok") for cell in ticket.cells}
        for cell_id, waiter in waiting.items():
            outcomes[cell_id] = await waiter
        return outcomes

    async def _queue_cells(
        self, request: RunRequest, user: str, origin: RunOrigin | None = None
    ) -> tuple[RunTicket, dict[str, asyncio.Future[RunOutcome]]]:
        # A cell the previous server left running gets its journal replayed first: a run
        # queued meanwhile would write after the replay's outputs instead of over them.
        await self.recovered()
        notebook_ref = await self._docs.resolve(request.path)
        room_id = notebook_ref.room_id
        kernel_id = await self._kernel_for(request.kernel_id, notebook_ref.path)
        # A tab's last keystrokes may come after its request (another socket).
        notebook = await with_shown_sources(lambda: self._docs.notebook(room_id), request.sources)
        cells = cells_to_run(notebook, request.cell_ids)
        # No await from here on: the sources checked are the sources queued.
        check_sources(cells, request.source_hashes or {})
        queue = self._queue(kernel_id)
        origin = (origin or RunOrigin(user, RUNS_API)).claimed(request.started_from)
        jobs = jobs_for(cells, room_id, user, request, starts_now=queue.idle, origin=origin)
        to_run = [job for job in jobs if not skipped(job)]
        # The queue first (an idle kernel gets its cell now), then the markers: the
        # kernel runs while every tab is told, and nothing awaits in between.
        futures = self._submit(queue, to_run) if to_run else []
        with writing(notebook):
            for cell, job in zip(cells, jobs, strict=True):
                mark(notebook, cell.ycell, job, kernel_id)
        queued = tuple(
            QueuedCell(job.cell_id, job.run_id, board.DONE if skipped(job) else board.QUEUED)
            for job in jobs
        )
        ticket = RunTicket(path=notebook_ref.path, kernel_id=kernel_id, cells=queued)
        return ticket, {job.cell_id: future for job, future in zip(to_run, futures, strict=True)}

    def _submit(self, queue: KernelQueue, jobs: list[CellJob]) -> list[asyncio.Future[RunOutcome]]:
        """Hand the jobs to their queue, before any cell is marked: if that fails, the
        request fails and no cell shows queued."""
        try:
            return queue.submit(jobs)
        except Exception as e:
            self._log.exception("jupyter-loop could not queue cells")
            raise JupyterLoopError(failure_note("queueing this cell", e)) from e

    async def answer_input(self, reply: InputReply) -> None:
        room_id = await self._docs.room_id(reply.path)
        for queue in self._queues.values():
            current = queue.current
            if current is not None and current.job.room_id == room_id:
                await queue.answer_input(room_id, reply.cell_id, reply.request_id, reply.value)
                return
        raise Conflict("No cell of this notebook is waiting for input.")

    async def pending(self, path: str) -> list[dict[str, str]]:
        """The running and queued cells of a notebook, in run order."""
        await self.recovered()
        room_id = await self._docs.room_id(path)
        return [
            {"cell_id": job.cell_id, "run_id": job.run_id, "kernel_id": queue.kernel_id}
            for queue in self._queues.values()
            for job in queue.pending()
            if job.room_id == room_id
        ]

    def in_flight(self) -> list[dict[str, str]]:
        """Every running and queued cell on this server, each kernel's in run order."""
        return [
            {
                "path": self._docs.path_of(job.room_id) or "",
                "cell_id": job.cell_id,
                "run_id": job.run_id,
                "kernel_id": queue.kernel_id,
                "state": board.RUNNING if index == 0 and queue.current else board.QUEUED,
                "by": job.by,
            }
            for queue in self._queues.values()
            for index, job in enumerate(queue.pending())
        ]

    async def history(
        self, path: str, cell_id: str | None = None, limit: int = 100
    ) -> list[RunEntry]:
        """The notebook's runs (or a cell's), newest first; runs that ended are all in."""
        history = self._settings.history
        room_id = await self._docs.room_id(path)
        if history is None:
            return []
        await asyncio.to_thread(history.settle)
        return await asyncio.to_thread(history.runs, room_id, cell_id, limit)

    @property
    def output_store(self) -> OutputStore | None:
        """Where the runs' full outputs are kept (``None``: not kept)."""
        return self._settings.outputs.store

    @property
    def output_policy(self) -> OutputPolicy:
        """What happens to outputs on their way into a cell (budget, links, store)."""
        return self._settings.outputs

    async def live_notebook(self, path: str) -> tuple[str, YNotebook]:
        """The room of the notebook at ``path`` and its live shared document (loaded if no
        tab has it open)."""
        room_id = await self._docs.room_id(path)
        return room_id, await self._docs.notebook(room_id)

    async def stale_marks(self, room_id: str, sources: dict[str, str]) -> dict[str, str]:
        """Why each cell's outputs are stale, for the cells (id: source now) whose last run
        ran other source, or on a kernel other than the notebook's now (absent: not stale)."""
        history = self._settings.history
        if history is None or not sources:
            return {}
        last = await asyncio.to_thread(history.last_runs, room_id)
        path = self._docs.path_of(room_id)
        try:
            kernel_id = await self._kernel_for(None, path) if path else None
        except Conflict:
            kernel_id = None  # no kernel now: only edits tell
        queue = self._queues.get(kernel_id) if kernel_id else None
        # A kernel this server never ran a cell on: whatever ran before ran elsewhere.
        kernel_run = None if kernel_id is None else queue.line.kernel_run if queue else ""
        marks = {
            cell_id: stale_reason(last.get(cell_id), source_hash(source), kernel_run)
            for cell_id, source in sources.items()
        }
        return {cell_id: reason for cell_id, reason in marks.items() if reason}

    async def ensure_kernel(self, path: str) -> str:
        """The notebook's kernel; without one, a session is opened for it as a tab does.

        For clients that have no tab to open the session (the MCP endpoint).
        """
        try:
            return await self._kernel_of(path)
        except Conflict:
            pass
        await self._docs.room_id(path)  # a missing notebook is a 404, not a kernel
        session = await self._sessions.create_session(path=path, name=path, type="notebook")
        return str(session["kernel"]["id"])

    async def interrupt(self, path: str) -> str:
        """Interrupt the notebook's kernel, as a tab's stop button does; returns its id.

        The kernel-action event drops the queued cells (see :meth:`_on_kernel_action`).
        """
        kernel_id = await self._kernel_of(path)
        await self._kernels.interrupt_kernel(kernel_id)
        return kernel_id

    async def variables(self, path: str, timeout: float = VARIABLES_TIMEOUT) -> VariablesReport:
        """The user variables of the notebook's kernel, read silently (see ``kernel.introspect``).

        Raises ``Conflict`` while a cell runs or waits (the snippet would wait behind them).
        The queue, not the kernel's last status, tells: the status of the previous read may
        still say busy; and a run the tab shows done is over in the kernel, even while its
        end is still being written. Code run by another client (a console) shows as a
        timeout. A read still in flight is waited for, never sent again (see
        ``kernel.silent_read``).
        """
        kernel_id = await self._kernel_of(path)
        queue = self._queue(kernel_id)
        if queue.kernel_has_work:
            raise Conflict(KERNEL_BUSY)
        reply = await queue.line.evaluate({EXPRESSION_KEY: EXPRESSION}, timeout)
        masker = self._settings.outputs.masker
        return report_from_reply(reply, masker.mask) if masker else report_from_reply(reply)

    async def _kernel_of(self, path: str) -> str:
        """The kernel of the notebook at ``path`` (any spelling of it)."""
        return await self._kernel_for(None, (await self._docs.resolve(path)).path)

    async def _kernel_for(self, kernel_id: str | None, path: str) -> str:
        if kernel_id is not None:
            if kernel_id not in self._kernels:
                raise NotFound(f"No kernel with id '{kernel_id}'.")
            return kernel_id
        for session in await self._sessions.list_sessions():
            kernel = session.get("kernel") or {}
            if session.get("path") == path and kernel.get("id") in self._kernels:
                return str(kernel["id"])
        raise Conflict(f"'{path}' has no running kernel; start one, then run again.")

    # -- kernels ---------------------------------------------------------------------

    def _queue(self, kernel_id: str) -> KernelQueue:
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
        # reports a death instead (see ``kernel.connection.KernelChannel``).
        manager.add_restart_callback(restarted, "restart")
        manager.add_restart_callback(died, "dead")

    async def _on_kernel_action(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
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
