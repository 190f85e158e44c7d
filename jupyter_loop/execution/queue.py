"""One kernel's run queue: cells run one at a time, in the order they were asked for.

The next cell is handed to the kernel the moment the one before ends, before that one's
results are written, so a Run All keeps the kernel busy. Like JupyterLab, an error (or
an interrupt) drops whatever is still queued; a kernel restart or death ends the running
cell and empties the queue (``kernel.line``: the queue's connection to its kernel, across
the kernel's lives).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Map

from ..document import LiveDocuments, writing
from ..errors import JupyterLoopError
from ..tasks import BackgroundTasks
from .cell_marks import (
    failure_note,
    mark_dropped,
    mark_finished,
    mark_handed_over,
    note_line,
    write_failure,
)
from .durability.kept_runs import forget_request
from .durability.ledger import LedgerEntry, NullLedger, RunLedger
from .durability.wal import RunEnd
from .handover import Handover
from .history import RunHistory
from .kernel.line import KernelLine
from .outputs.cell_writers import CellWriters
from .outputs.ops import AppendStream
from .outputs.writer import OutputPolicy
from .prompts import hide_prompt, show_prompt, take_answer
from .run import CellJob, CellRun, RunOutcome
from .run_origin import RUNS_API, RunOrigin, entry_for, kept_source, outputs_digest


@dataclass(frozen=True)
class QueueSettings:
    batch_interval: float = 0.05
    kernel_ready_timeout: float = 60.0
    liveness_interval: float = 2.0
    outputs: OutputPolicy = OutputPolicy()  # masking, budget and full-output store
    history: RunHistory | None = None  # every run's record (None: none kept)


HANDED_AHEAD = 0
"""Cells handed to the kernel beyond the running one. Zero: the next cell is handed over
the moment the one before ends, before that one's results are written, so the kernel
runs it meanwhile. Handing one more ahead kept the kernel no busier: with two requests
in flight, pyzmq's asyncio poll missed replies (see ``kernel.zmq_link.POLL_TIMEOUT``)."""


class KernelQueue:
    """Runs the cells queued on one kernel and writes what they produce.

    A job moves from ``_jobs`` (waiting) to ``_handed`` (its execute request sent) when
    at most :data:`HANDED_AHEAD` others wait in the kernel, and leaves it once its end is
    written. The kernel runs what it was handed in order (``stop_on_error`` would abort
    what it held past an error), and outputs reach each run by parent message id.
    """

    def __init__(
        self,
        kernel_id: str,
        kernel_manager: Any,
        docs: LiveDocuments,
        settings: QueueSettings,
        log: logging.Logger,
        ledger: RunLedger | None = None,
        on_new_life: Callable[[str], None] | None = None,
    ) -> None:
        self.kernel_id = kernel_id
        self._ledger = ledger or NullLedger()
        self._manager = kernel_manager
        self._docs = docs
        self._settings = settings
        self._log = log
        self._tasks = BackgroundTasks(log)  # input prompts, ends of a lost kernel's runs
        # The kernel's connection, across its lives: a death it hears of ends runs here.
        self.line = KernelLine(
            kernel_id,
            kernel_manager,
            log,
            runs=self,
            tasks=self._tasks,
            ready_timeout=settings.kernel_ready_timeout,
            liveness_interval=settings.liveness_interval,
            on_new_life=on_new_life,
        )
        self._jobs: deque[CellJob] = deque()
        self._wakeup = asyncio.Event()
        self._handed: deque[CellRun] = deque()  # in the kernel's order, not yet settled
        self._current: CellRun | None = None  # the one the kernel runs, while it does
        self._writers = CellWriters(docs, settings.batch_interval, settings.outputs, log)
        self._handover = Handover(
            kernel_id, self.line, self._writers, docs, self._ledger, log, settings.outputs.masker
        )
        self._worker: asyncio.Task[None] | None = None
        self._outcomes: dict[str, asyncio.Future[RunOutcome]] = {}
        self._closing = False

    # -- queueing --------------------------------------------------------------------

    def submit(self, jobs: list[CellJob]) -> list[asyncio.Future[RunOutcome]]:
        """Queue the jobs; each future resolves with how its run ended."""
        loop = asyncio.get_running_loop()
        waiting = self._jobs or jobs
        ahead = waiting[0] if waiting else None
        handed_now = not self._handed and ahead is not None and ahead.marked_running
        now = ahead if handed_now and self.line.channel.connected else None
        # Listed running at once if handed at once: one line of the ledger before the send.
        self._ledger.add([self._queued_entry(job, running=job is now) for job in jobs])
        outcomes = []
        for job in jobs:
            self._docs.pin(job.room_id)
            self._jobs.append(job)
            outcome: asyncio.Future[RunOutcome] = loop.create_future()
            self._outcomes[job.run_id] = outcome
            outcomes.append(outcome)
        if now is not None:
            # The kernel gets the cell before the request is even answered. Its writer
            # starts afresh after the send (no message is read before the next turn); the
            # marker written next clears the cell's outputs.
            run = self._take(self._jobs.popleft())
            self._handover.send(run, now.code)
            run.writer.reset(now.run_id)
        self._start_worker()
        return outcomes

    def _queued_entry(self, job: CellJob, *, running: bool = False) -> LedgerEntry:
        # With its kernel: a server that adopts the kernel after a crash runs it there.
        # With the run's record as asked (who, through what, the source): a server that
        # takes the run over continues it (see ``LedgerEntry``).
        origin = (job.origin or RunOrigin(job.by, RUNS_API)).fields
        asked = job.kept or kept_source(job.code, self._settings.outputs.masker)
        return LedgerEntry(
            job.room_id, job.cell_id, job.run_id, "running" if running else "queued",
            self.kernel_id,
            approved_hash=job.approved_hash or "", source_hash=asked.hash,
            source=asked.text, queued_at=job.queued_at, **origin,
        )  # fmt: skip

    def follow(self, listed: LedgerEntry, job: CellJob, kind: type[CellRun]) -> CellRun:
        """Take up a run the previous server handed to this (kept) kernel: it answers the
        messages of its execute request from now on (see ``kept_runs.resume_run``). It stays
        listed with the record it had (``listed``): a second crash takes it over again."""
        msg_id = listed.msg_id
        self._docs.pin(job.room_id)
        self._ledger.add([replace(listed, state="running", kernel_id=self.kernel_id)])
        run = self._take(job, kind)
        run.msg_id = msg_id
        self.line.channel.follow(msg_id, run)
        self._start_worker()
        return run

    def _start_worker(self) -> None:
        self._wakeup.set()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._work())

    def _settle(self, job: CellJob, outcome: RunOutcome, run: CellRun | None = None) -> None:
        self._ledger.remove(job.run_id)
        self._record(job, outcome, run)
        waiter = self._outcomes.pop(job.run_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(outcome)

    @property
    def current(self) -> CellRun | None:
        return self._current

    @property
    def idle(self) -> bool:
        """Nothing running or waiting, not even a silent read: a cell submitted now starts
        at once."""
        return not self._handed and not self._jobs and not self.line.reading

    @property
    def kernel_has_work(self) -> bool:
        """A cell is queued, or handed to the kernel and not yet over there. A run whose
        outcome is known (its reply and idle came) no longer counts while its end is
        written: a tab shows the run done (its count) before that writing ends, which
        may wait for a save."""
        return bool(self._jobs) or any(run.ended_at is None for run in self._handed)

    def pending(self) -> list[CellJob]:
        """The cells handed to the kernel (the running one first), then those queued. A
        run whose end the document shows is not among them, though its writing may go on
        (waiting for a save its end asked for): a tab shows it done, and so does everyone
        who asks (``GET runs``, an outside agent's ``get_outputs``)."""
        return [run.job for run in self._handed if not run.end_shown] + list(self._jobs)

    async def _work(self) -> None:
        while not self._closing or self._jobs or self._handed:
            if not self._jobs and not self._handed:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            await self._hand_over_more()
            if self._handed:
                await self._settle_head()

    async def _settle_head(self) -> None:
        """Wait for the oldest handed run to end, hand the kernel the next cell, then
        write this one's end (the kernel runs the next one meanwhile)."""
        run = self._handed[0]
        try:
            outcome = await self._outcome_of(run)
            if not outcome.stops_queue:
                await self._hand_over_more()
            await self._end(run, outcome)
        except Exception as e:  # writing into the document failed: say so, plainly
            self._log.exception("jupyter-loop failed to run cell %s", run.job.cell_id)
            outcome = RunOutcome("error", note=failure_note("running this cell", e))
            await write_failure(self._docs, run.job, outcome, self._log)
        finally:
            self._handed.popleft()
            self._docs.unpin(run.job.room_id)
            if self._handed:  # never left waiting for a start that failed to be written
                self._handed[0].writer.opened()
        self._settle(run.job, outcome, run)
        if outcome.stops_queue:  # not the cells run again since it ended: they run
            await self.drop_queued(queued_by=run.ended_at)

    # -- handing cells to the kernel (when; how is ``handover``'s) --------------------

    async def _hand_over_more(self) -> None:
        while self._jobs and not self._closing and self._waiting_in_kernel() <= HANDED_AHEAD:
            if any(run.done.done() and run.done.result().stops_queue for run in self._handed):
                return  # that run's end drops the queue
            job = self._jobs[0]
            if any(run.job.cell_id == job.cell_id for run in self._handed):
                return  # the cell's writer belongs to its earlier run until that one ends
            self._jobs.popleft()
            await self._hand_over(job)

    def _waiting_in_kernel(self) -> int:
        return sum(1 for run in self._handed if not run.done.done())

    def _take(self, job: CellJob, kind: type[CellRun] = CellRun) -> CellRun:
        """The job's run, last among those handed to the kernel."""
        run = self._handover.run_of(
            job,
            kind,
            on_display_update=self._writers.update_display,
            on_input_request=self._input_requested,
        )
        self._handed.append(run)
        return run

    async def _hand_over(self, job: CellJob) -> None:
        run = self._take(job)
        await self._handover.hand_over(run, behind_another=len(self._handed) > 1)

    async def _outcome_of(self, run: CellRun) -> RunOutcome:
        """How the run ended; a kernel found dead meanwhile ends it (and those after it)."""
        self._current = run
        try:
            return await self.line.outcome_of(run.done)
        finally:
            self._current = None

    # -- ending runs -----------------------------------------------------------------

    async def _end(self, run: CellRun, outcome: RunOutcome) -> None:
        """Write the run's end; the start of the cell handed over after it (its outputs
        cleared, shown running) goes in the same transaction."""
        job = run.job
        following = self._handed[1] if len(self._handed) > 1 else None
        started: list[bool] = []

        def finish(notebook: YNotebook, ycell: Map) -> None:
            mark_finished(notebook, ycell, run, outcome)
            run.end_shown = True  # in this transaction: the tabs see it as pending() does
            if following is not None and following.job.room_id == job.room_id:
                mark_handed_over(notebook, following.job)
                started.append(True)

        def digest(ycell: Map) -> None:
            # For the history: the outputs as the end left them, read once the tabs have
            # the end (in its transaction, a large output's digest held their update up).
            run.outputs_digest = outputs_digest(ycell)

        try:  # whatever happens, the cell handed over next may write its outputs after
            if run.msg_id is not None:
                self.line.channel.release(run.msg_id)
            if outcome.note:
                run.writer.push(AppendStream("stderr", note_line(outcome.note)))
            await run.writer.end_run(
                then=finish,
                ending=RunEnd(outcome.status, outcome.execution_count, outcome.note),
                read_back=digest if self._settings.history is not None else None,
            )
            forget_request(self._manager, run.msg_id)
            if following is not None and not started:
                notebook = await self._docs.notebook(following.job.room_id)
                with writing(notebook):
                    mark_handed_over(notebook, following.job)
        finally:
            if following is not None:
                following.writer.opened()
        # Not at once: a save competed with sending this end to the tabs. Once runs pause
        # (``room_saves.QUIET``), shared by those ending meanwhile; the output journal
        # covers a crash until then.
        self._docs.saves.save_soon(job.room_id)

    def _record(self, job: CellJob, outcome: RunOutcome, run: CellRun | None) -> None:
        """Hand the run's record to the history (its writer thread stores it)."""
        history = self._settings.history
        if history is not None:
            path = self._docs.path_of(job.room_id) or ""
            masker = self._settings.outputs.masker
            history.record(
                entry_for(job, outcome, run, path, self.kernel_id, self.line.kernel_run, masker)
            )

    def any_sent(self) -> bool:
        """Whether a run not ended yet reached the kernel (its request sent, or followed)."""
        return any(run.msg_id is not None for run in self._handed if not run.done.done())

    def end_handed(self, note: str | None) -> None:
        """The kernel is gone: the cell it ran is cut off, those handed after it never ran."""
        unfinished = [run for run in self._handed if not run.done.done()]
        for index, run in enumerate(unfinished):
            run.end(RunOutcome("cut_off", note=note) if index == 0 else RunOutcome("aborted"))

    # -- stdin -----------------------------------------------------------------------

    def _input_requested(self, run: CellRun, message: dict[str, Any]) -> None:
        self._tasks.spawn(show_prompt(run, message), "writing an input prompt")

    async def answer_input(self, room_id: str, cell_id: str, request_id: str, value: str) -> None:
        """Send the answer to the prompt the running cell shows; echo it like JupyterLab."""
        run, header = take_answer(self._current, room_id, cell_id, request_id, value)
        self.line.channel.send_input(value, parent=header)
        await hide_prompt(run)

    # -- stopping --------------------------------------------------------------------

    async def drop_queued(self, queued_by: float | None = None) -> None:
        """Forget the cells still waiting (``queued_by``: those queued by then): their
        markers go back to idle."""
        dropped: list[CellJob] = []
        kept: list[CellJob] = []
        for job in self._jobs:
            (dropped if queued_by is None or job.queued_at <= queued_by else kept).append(job)
        self._jobs.clear()
        self._jobs.extend(kept)
        try:
            for room_id in dict.fromkeys(job.room_id for job in dropped):
                await self._mark_dropped(room_id, [j for j in dropped if j.room_id == room_id])
        finally:
            for job in dropped:
                self._docs.unpin(job.room_id)
                self._settle(job, RunOutcome("aborted"))

    async def _mark_dropped(self, room_id: str, jobs: list[CellJob]) -> None:
        try:
            notebook = await self._docs.notebook(room_id)
        except JupyterLoopError:
            return
        mark_dropped(notebook, jobs, self._log)

    async def leave(self) -> None:
        """The server stops, the kernel stays (``keep_kernels = "always"``): the running
        cell stays running, in the ledger, for the next server to follow (see ``stop``),
        and the cells queued behind it stay queued there, for it to run."""
        for job in self._jobs:
            self._docs.unpin(job.room_id)
        self._jobs.clear()  # not dropped: their markers and ledger entries stay
        await self.stop(note=None)

    async def stop(self, note: str | None = "The server stopped during this run.") -> None:
        """End the running cell (its outputs and markers are written), then close.
        ``note=None``: leave it running (its outputs so far are written)."""
        self._closing = True
        await self.drop_queued()
        if note is not None:
            self.end_handed(note)
        self._wakeup.set()
        if self._worker is not None:
            done, _ = await asyncio.wait({self._worker}, timeout=5 if note else 0)
            if not done:
                self._worker.cancel()
                await asyncio.wait({self._worker})
        await self._tasks.close(timeout=3)
        await self._writers.close()
        await self.line.close()
