"""Handing a queued cell to its kernel: the moment a job becomes a run.

A cell runs the source it has when it is handed over, not when it was queued: a user who
edits a queued cell gets the edit run, as in JupyterLab. So the hand-over clears the cell's
outputs and takes its source in one step, then checks what it took (a cell gone or
emptied meanwhile ends its run with nothing to run; a cell whose source changed after
its run was approved is not run), waits for the kernel to take requests, and sends the
execute request. Whatever fails on the way ends the run with a note in the cell, never a
stuck ``[*]``.

The queue (``queue.py``) says *when* a cell is handed over; this module says *how*.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from jupyter_ydoc import YNotebook
from pycrdt import Map

from ..document import LiveDocuments, source_hash
from ..errors import JupyterLoopError
from . import board
from .cell_marks import failure_note, source_of
from .durability.ledger import RunLedger
from .kernel.line import KernelLine
from .outputs.cell_writers import CellWriters
from .run import CellJob, CellRun, RunOutcome
from .run_origin import kept_source

if TYPE_CHECKING:
    from ..secrets import SecretMasker

SOURCE_CHANGED = "This cell was not run: its source changed after the run was approved."


class Handover:
    """Makes the run of a job and sends its cell to the kernel on ``line``."""

    def __init__(
        self,
        kernel_id: str,
        line: KernelLine,
        writers: CellWriters,
        docs: LiveDocuments,
        ledger: RunLedger,
        log: logging.Logger,
        masker: SecretMasker | None = None,
    ) -> None:
        self._kernel_id = kernel_id
        self._line = line
        self._writers = writers
        self._docs = docs
        self._ledger = ledger
        self._log = log
        self._masker = masker  # the source handed to the kernel is listed masked

    def run_of(self, job: CellJob, kind: type[CellRun], **callbacks: Any) -> CellRun:
        """The job's run, handed over from now on (it answers the messages of its request);
        ``callbacks`` are the queue's (display updates, input requests)."""
        run = kind(
            job,
            self._writers.of(job.room_id, job.cell_id, job.index_hint),
            on_count=lambda count: self._ledger.mark_counted(job.run_id, count),
            **callbacks,
        )
        self._ledger.mark_running(job.run_id)
        return run

    def send(self, run: CellRun, code: str) -> None:
        """Send the execute request; a failure to send ends the run with a note."""
        run.source, run.started_at, run.kernel_run = code, time.time(), self._line.kernel_run
        try:
            run.msg_id = self._line.channel.execute(code, run)
            # Before any output: a server that takes the run over after a crash records
            # it as it started (the source handed, when), not as the empty run it sees.
            handed = kept_source(code, self._masker) if code != run.job.code else None
            self._ledger.mark_sent(
                run.job.run_id, self._kernel_id, run.msg_id, handed, run.started_at
            )
        except Exception as e:
            self._log.exception("jupyter-loop failed running cell %s", run.job.cell_id)
            run.end(RunOutcome("error", note=failure_note("running this cell", e)))

    async def hand_over(self, run: CellRun, behind_another: bool) -> None:
        """Start the run and send its cell; whatever fails ends the run with a note.
        ``behind_another``: a run handed over before it has not ended yet."""
        job = run.job
        try:
            code = await self._start(run, behind_another)
        except Exception as e:
            self._log.exception("jupyter-loop failed to start cell %s", job.cell_id)
            run.end(RunOutcome("error", note=failure_note("running this cell", e)))
            return
        if code is None or not code.strip():
            run.end(RunOutcome("ok"))  # gone, or emptied while it waited: nothing to run
        elif job.approved_hash is not None and source_hash(code) != job.approved_hash:
            run.end(RunOutcome("error", note=SOURCE_CHANGED))
        elif await self._connected(run):
            self.send(run, code)

    async def _start(self, run: CellRun, behind_another: bool) -> str | None:
        """Clear the cell's outputs and take its source. ``None``: the cell is gone or no
        longer code.

        A cell handed over as the one before it ends is cleared in that one's last
        transaction (the queue's ``_end``); otherwise in a transaction of its own.
        """
        job = run.job
        if job.marked_running:
            run.writer.reset(job.run_id)  # cleared when queued, in the same transaction
            return job.code
        if behind_another:
            run.writer.begin(job.run_id)
            notebook = await self._docs.notebook(job.room_id)
            return source_of(notebook, job)
        taken: list[str | None] = []

        def start(notebook: YNotebook, ycell: Map) -> None:
            board.mark_started(notebook, ycell, job.run_id)
            taken.append(str(ycell.get("source", "")))

        await run.writer.start_run(job.run_id, then=start)
        return taken[0] if taken else None

    async def _connected(self, run: CellRun) -> bool:
        """Wait until the kernel can take requests, or the run was ended meanwhile (the
        kernel restarted, the server stops). A failure ends the run with a note."""
        if self._line.channel.connected:
            return True
        connecting = asyncio.ensure_future(self._line.ready())
        either: set[asyncio.Future[Any]] = {connecting, run.done}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not connecting.done():
            connecting.cancel()
            return False
        try:
            connecting.result()
        except JupyterLoopError as e:
            run.end(RunOutcome("error", note=e.message))
        except Exception as e:
            self._log.exception("jupyter-loop could not connect to kernel %s", self._kernel_id)
            run.end(RunOutcome("error", note=failure_note("connecting to the kernel", e)))
        return not run.done.done()
