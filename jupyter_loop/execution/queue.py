"""One kernel's run queue: cells run one at a time, in the order they were asked for.

Like JupyterLab, an error (or an interrupt) drops whatever is still queued; a kernel
restart or death ends the running cell and empties the queue.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map

from ..document import ORIGIN, CellNotFound, LiveDocuments, find_cell
from ..errors import Conflict, JupyterLoopError, Unavailable
from ..records import InputRequest
from ..tasks import BackgroundTasks
from . import board
from .introspect import ReplyWaiter
from .kernel import KernelChannel
from .ledger import LedgerEntry, NullLedger, RunLedger
from .ops import AppendStream, UpdateDisplay
from .run import KERNEL_DIED, CellJob, CellRun, RunOutcome
from .wal import RunEnd
from .writer import CellWriter, OutputPolicy, output_map

_NOTE_PREFIX = "[jupyter-loop] "


@dataclass(frozen=True)
class QueueSettings:
    batch_interval: float = 0.05
    kernel_ready_timeout: float = 60.0
    liveness_interval: float = 2.0
    outputs: OutputPolicy = OutputPolicy()  # masking, budget and full-output store


class KernelQueue:
    """Runs the cells queued on one kernel and writes what they produce."""

    def __init__(
        self,
        kernel_id: str,
        kernel_manager: Any,
        docs: LiveDocuments,
        settings: QueueSettings,
        log: logging.Logger,
        ledger: RunLedger | None = None,
    ) -> None:
        self.kernel_id = kernel_id
        self._ledger = ledger or NullLedger()
        self._manager = kernel_manager
        self._docs = docs
        self._settings = settings
        self._log = log
        self._tasks = BackgroundTasks(log)  # input prompts, ends of a lost kernel's runs
        self._channel = KernelChannel(kernel_manager, log, on_lost=self._kernel_lost)
        self._jobs: deque[CellJob] = deque()
        self._wakeup = asyncio.Event()
        self._active: CellJob | None = None  # taken from the queue, not yet settled
        self._current: CellRun | None = None  # its run, once it executes
        self._writers: dict[tuple[str, str], CellWriter] = {}
        self._worker: asyncio.Task[None] | None = None
        self._outcomes: dict[str, asyncio.Future[RunOutcome]] = {}
        self._closing = False

    # -- queueing --------------------------------------------------------------------

    def submit(self, jobs: list[CellJob]) -> list[asyncio.Future[RunOutcome]]:
        """Queue the jobs; each future resolves with how its run ended."""
        loop = asyncio.get_running_loop()
        self._ledger.add(
            [LedgerEntry(job.room_id, job.cell_id, job.run_id, "queued") for job in jobs]
        )
        outcomes = []
        for job in jobs:
            self._docs.pin(job.room_id)
            self._jobs.append(job)
            outcome: asyncio.Future[RunOutcome] = loop.create_future()
            self._outcomes[job.run_id] = outcome
            outcomes.append(outcome)
        self._wakeup.set()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._work())
        return outcomes

    def _settle(self, job: CellJob, outcome: RunOutcome) -> None:
        self._ledger.remove(job.run_id)
        waiter = self._outcomes.pop(job.run_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(outcome)

    @property
    def current(self) -> CellRun | None:
        return self._current

    @property
    def idle(self) -> bool:
        """Nothing running or waiting: a cell submitted now starts at once."""
        return self._active is None and not self._jobs

    def pending(self) -> list[CellJob]:
        """The cell being run (or waiting for its kernel), then those queued."""
        running = [self._active] if self._active is not None else []
        return running + list(self._jobs)

    async def _work(self) -> None:
        while not self._closing or self._jobs:
            if not self._jobs:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            job = self._active = self._jobs.popleft()
            try:
                outcome = await self._run(job)
            except Exception as e:  # writing into the document failed: say so, plainly
                self._log.exception("jupyter-loop failed to run cell %s", job.cell_id)
                outcome = RunOutcome("error", note=failure_note("running this cell", e))
                await self._mark_failed(job, outcome)
            finally:
                self._active = None
                self._docs.unpin(job.room_id)
            self._settle(job, outcome)
            if outcome.stops_queue:
                await self.drop_queued()

    # -- running ---------------------------------------------------------------------

    async def _run(self, job: CellJob) -> RunOutcome:
        writer = self._writer_for(job.room_id, job.cell_id)
        self._ledger.mark_running(job.run_id)
        if job.marked_running:
            writer.reset(job.run_id)  # cleared when queued, in the same transaction
        else:
            await writer.start_run(
                job.run_id,
                then=lambda notebook, ycell: board.mark_started(notebook, ycell, job.run_id),
            )
        run = CellRun(
            job,
            writer,
            on_display_update=self._update_display,
            on_input_request=self._input_requested,
        )
        outcome = await self._attempt(run)
        if outcome.note:
            writer.push(AppendStream("stderr", f"{_NOTE_PREFIX}{outcome.note}\n"))
        await writer.end_run(
            then=lambda notebook, ycell: self._finish(notebook, ycell, run, outcome),
            ending=RunEnd(outcome.status, outcome.execution_count, outcome.note),
        )
        # Save at once when nothing else of this notebook is queued; a Run All saves
        # a little later, once for several cells.
        more = any(queued.room_id == job.room_id for queued in self._jobs)
        self._docs.save_soon(job.room_id, delay=0.5 if more else 0.0)
        return outcome

    async def _attempt(self, run: CellRun) -> RunOutcome:
        """Connect and execute; whatever fails ends the run with a note saying what."""
        try:
            await self._ready()
        except JupyterLoopError as e:
            return RunOutcome("error", note=e.message)
        except Exception as e:
            self._log.exception("jupyter-loop could not connect to kernel %s", self.kernel_id)
            return RunOutcome("error", note=failure_note("connecting to the kernel", e))
        try:
            return await self._execute(run)
        except Exception as e:
            self._log.exception("jupyter-loop failed running cell %s", run.job.cell_id)
            return RunOutcome("error", note=failure_note("running this cell", e))

    async def _mark_failed(self, job: CellJob, outcome: RunOutcome) -> None:
        """Last resort when the writer failed: the note and the done marker, directly."""
        try:
            notebook = await self._docs.notebook(job.room_id)
            _, ycell = find_cell(notebook, job.cell_id)
            with notebook.ydoc.transaction(origin=ORIGIN):
                outputs = ycell.get("outputs")
                if isinstance(outputs, Array):
                    text = f"{_NOTE_PREFIX}{outcome.note}\n"
                    outputs.append(output_map(_stderr(text)))
                board.mark_done(
                    notebook, ycell, run_id=job.run_id, status=outcome.status, note=outcome.note
                )
        except Exception:
            self._log.exception("jupyter-loop could not mark cell %s as failed", job.cell_id)

    async def _ready(self) -> None:
        await self._channel.ready(self._settings.kernel_ready_timeout)

    async def evaluate(self, expressions: dict[str, str], timeout: float) -> dict[str, Any]:
        """The ``user_expressions`` of a silent execute request (see ``introspect``).

        ``timeout`` covers connecting too: a kernel that is still starting, or dead, makes
        the caller wait no longer than one that is busy.
        """

        async def ask() -> dict[str, Any]:
            await self._ready()
            waiter = ReplyWaiter()
            msg_id = self._channel.evaluate(expressions, waiter)
            try:
                return await waiter.reply
            finally:
                self._channel.release(msg_id)

        try:
            return await asyncio.wait_for(ask(), timeout)
        except TimeoutError:
            raise Unavailable(
                f"The kernel did not answer within {timeout:g} s (still starting, or busy "
                "with code run from elsewhere)."
            ) from None

    async def _execute(self, run: CellRun) -> RunOutcome:
        self._current = run
        msg_id = self._channel.execute(run.job.code, run)
        try:
            while True:
                done, _ = await asyncio.wait({run.done}, timeout=self._settings.liveness_interval)
                if done:
                    return run.done.result()
                if not await self._channel.alive():
                    await self._reconnect()
                    run.end(RunOutcome("cut_off", note=KERNEL_DIED))
        finally:
            self._channel.release(msg_id)
            self._current = None

    def _finish(self, notebook: YNotebook, ycell: Map, run: CellRun, outcome: RunOutcome) -> None:
        job = run.job
        board.mark_done(
            notebook,
            ycell,
            run_id=job.run_id,
            status=outcome.status,
            execution_count=outcome.execution_count,
            note=outcome.note,
        )
        board.set_timing(ycell, run.timing if job.record_timing else None)
        _apply_payload(notebook, ycell, outcome.payload)

    # -- display updates and stdin ---------------------------------------------------

    def _writer_for(self, room_id: str, cell_id: str) -> CellWriter:
        key = (room_id, cell_id)
        writer = self._writers.get(key)
        if writer is None:
            writer = CellWriter(
                self._docs,
                room_id,
                cell_id,
                interval=self._settings.batch_interval,
                log=self._log,
                policy=self._settings.outputs,
            )
            self._writers[key] = writer
        return writer

    def _update_display(self, op: UpdateDisplay) -> None:
        # Display ids belong to the kernel: the handle may come from any cell it ran.
        for writer in self._writers.values():
            if writer.has_display(op.display_id):
                writer.push(op)

    def _input_requested(self, run: CellRun, message: dict[str, Any]) -> None:
        content = message.get("content", {})
        writer = self._writer_for(run.job.room_id, run.job.cell_id)
        request = InputRequest(
            request_id=str(message["header"]["msg_id"]),
            prompt=writer.mask(str(content.get("prompt", ""))),
            password=bool(content.get("password", False)),
        )
        run.pending_input = (request, message["header"])
        show = writer.flush(
            then=lambda nb, _: board.set_input_request(nb, run.job.cell_id, request)
        )
        self._tasks.spawn(show, "writing an input prompt")

    async def answer_input(self, room_id: str, cell_id: str, request_id: str, value: str) -> None:
        """Send the answer to the prompt the running cell shows; echo it like JupyterLab."""
        run = self._current
        if run is None or (run.job.room_id, run.job.cell_id) != (room_id, cell_id):
            raise Conflict("This cell is not waiting for input.")
        if run.pending_input is None or run.pending_input[0].request_id != request_id:
            raise Conflict("This prompt has already been answered.")
        request, header = run.pending_input
        run.pending_input = None
        shown = "\u00b7" * 8 if request.password else value
        writer = self._writer_for(room_id, cell_id)
        # JupyterLab's stdin widget echoes the prompt, a space, then the answer.
        writer.push(AppendStream("stdin", f"{request.prompt} {shown}\n"))
        self._channel.send_input(value, parent=header)
        await writer.flush(then=lambda nb, _: board.set_input_request(nb, cell_id, None))

    # -- stopping --------------------------------------------------------------------

    async def drop_queued(self) -> None:
        """Forget the cells still waiting: their markers go back to idle."""
        dropped = list(self._jobs)
        self._jobs.clear()
        for job in dropped:
            try:
                await self._mark_dropped(job)
            finally:
                self._docs.unpin(job.room_id)
                self._settle(job, RunOutcome("aborted"))

    async def _mark_dropped(self, job: CellJob) -> None:
        try:
            notebook = await self._docs.notebook(job.room_id)
            _, ycell = find_cell(notebook, job.cell_id)
        except (CellNotFound, JupyterLoopError):
            return
        try:
            with notebook.ydoc.transaction(origin=ORIGIN):
                board.mark_done(notebook, ycell, run_id=job.run_id, status="aborted")
        except Exception:  # one cell failing must not leave the others marked queued
            self._log.exception("jupyter-loop could not mark cell %s as dropped", job.cell_id)

    async def end_all(self, note: str | None) -> None:
        """The kernel restarted or died: end the running cell and empty the queue."""
        await self.drop_queued()
        if self._current is not None:
            self._current.end(RunOutcome("cut_off", note=note))
        await self._reconnect()

    def _kernel_lost(self, note: str) -> None:
        # Told by the connection itself (a gateway announces a kernel it restarted).
        self._tasks.spawn(self.end_all(note), "ending the runs of a dead kernel")

    async def _reconnect(self) -> None:
        # Display ids and the connection belong to the old kernel process.
        await self._channel.close()
        self._channel = KernelChannel(self._manager, self._log, on_lost=self._kernel_lost)

    async def stop(self, note: str = "The server stopped during this run.") -> None:
        """End the running cell (its outputs and markers are written), then close."""
        self._closing = True
        await self.drop_queued()
        if self._current is not None:
            self._current.end(RunOutcome("cut_off", note=note))
        self._wakeup.set()
        if self._worker is not None:
            done, _ = await asyncio.wait({self._worker}, timeout=5)
            if not done:
                self._worker.cancel()
        await self._tasks.close(timeout=3)
        await asyncio.gather(*(writer.close() for writer in self._writers.values()))
        await self._channel.close()


def failure_note(doing: str, error: Exception) -> str:
    """What went wrong, in the words a user sees in the cell.

    >>> failure_note("connecting to the kernel", TypeError("no kernel_id"))
    'jupyter-loop failed while connecting to the kernel: TypeError: no kernel_id'
    >>> failure_note("running this cell", TimeoutError())
    'jupyter-loop failed while running this cell: it timed out'
    """
    detail = str(error) or ("it timed out" if isinstance(error, TimeoutError) else "")
    name = "" if isinstance(error, TimeoutError) else f"{type(error).__name__}: "
    return f"jupyter-loop failed while {doing}: {name}{detail}".rstrip(": ")


def _stderr(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stderr", "text": text}


def _apply_payload(notebook: YNotebook, ycell: Map, payload: list[dict[str, Any]]) -> None:
    """Honour ``set_next_input`` (``%load``, ``%recall``), as JupyterLab's executor does."""
    for item in payload:
        if item.get("source") != "set_next_input":
            continue
        text = str(item.get("text", ""))
        if item.get("replace"):
            source = ycell["source"]
            del source[0 : len(source)]
            source += text
            return
        index, _ = find_cell(notebook, str(ycell["id"]))
        new_cell = notebook.create_ycell(
            {"cell_type": "code", "source": text, "metadata": {"trusted": False}}
        )
        notebook.ycells.insert(index + 1, new_cell)
        return
