"""Runs on kept kernels: followed again after a server restart, or replayed if they ended.

A run the previous server handed to a kernel that a keeper kept alive is taken up where
it is (:func:`resume_run`): its cell is cleared and gets, through the ordinary writer
(masked, budgeted, journalled), every IOPub message the keeper journalled for its
execute request, then what the kernel publishes live. The two overlap: live messages
are held until the journal has caught up with the first of them (or has stayed quiet a
moment, for a run that prints nothing now), and a message is applied once, by its id. So
the cell ends with every line, in order, none doubled, also those printed while no
server ran. The execute reply went to the dead server's socket: a resumed run ends on
its ``idle`` status, its count and status taken from ``execute_input`` and ``error``.

A run whose kernel ended while no server ran (it died, or its keeper shut it down at the
orphan timeout) is replayed from the journal and closed with a note
(:func:`replay_ended_run`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_ydoc import YNotebook
from pycrdt import Map

from ...document import LiveDocuments
from ...records import InputRequest
from .. import board
from ..cell_marks import note_line
from ..outputs.ops import AppendStream
from ..outputs.writer import CellWriter, OutputPolicy
from ..run import CellJob, CellRun, RunOutcome
from .ledger import LedgerEntry
from .recovery import CUT_OFF
from .wal import JournalRecord, RunEnd

if TYPE_CHECKING:  # a circle for types only, kept on purpose (tests/project/test_imports.py)
    from ..queue import KernelQueue

CATCH_UP_QUIET = 0.5
"""Seconds the journal must stay unchanged before a silent run goes live: the keeper
writes a message within milliseconds of the kernel sending it."""
CATCH_UP_LIMIT = 5.0
"""Seconds to wait at most for the journal to reach the first live message."""
LINES_LOST = "Some of this run's output is missing: the kernel's journal reached its bound."
ORPHANED = (
    "The kernel was shut down: no Jupyter server came back within orphan_kernel_timeout. "
    "Its output up to then is above."
)
DIED_AWAY = "The kernel died while no Jupyter server was running."
GATEWAY_GAP = (
    "The Jupyter server restarted while this cell ran on a gateway kernel: some output "
    "from just before the restart may be missing here."
)
"""Said where a gateway run was taken up: the output journal ends up to one commit
interval before the crash, and the gateway keeps what came after the server's connection
closed (only for one session, when several tabs were connected)."""
GATEWAY_LOST = (
    "The Jupyter server restarted while this cell ran on a gateway kernel: what it printed "
    "from just before the restart until the server came back could not be recovered "
    "(the gateway kept none of it for jupyter-loop: another client was connected to the "
    "kernel)."
)
"""Said there instead when the gateway surely kept nothing for us (``gateway_rejoin``)."""


def taken_up_job(entry: LedgerEntry) -> CellJob:
    """The job of a run a previous server listed, as that server's record of it has it:
    who asked through what, when, and the source (masked) asked for or handed over. The
    cell's source now is not the run's: the cell may have been edited since."""
    return CellJob(
        entry.room_id, entry.cell_id, "", entry.run_id, entry.by,
        approved_hash=entry.approved_hash or None, origin=entry.origin,
        queued_at=entry.queued_at if entry.queued_at is not None else time.time(),
        kept=entry.kept,
    )  # fmt: skip


def taken_over(run: CellRun, entry: LedgerEntry, kernel_run: str) -> None:
    """Mark ``run`` as the continuation of the run ``entry`` records: started when that
    server handed it to the kernel, ended by this one."""
    run.taken_over = True
    run.started_at = entry.started_at
    run.kernel_run = kernel_run


def forget_request(manager: Any, msg_id: str | None) -> None:
    """The run's output is in the output journal: the keeper's copy can go."""
    forget = getattr(getattr(manager, "provisioner", None), "forget_request", None)
    if msg_id and callable(forget):
        forget(msg_id)


class Overlap:
    """Which live messages to apply after the journal of the same messages was applied.

    The journal may be ahead of what our socket has delivered (the keeper wrote a message
    our pump has not read yet): live messages the journal gave are dropped, until the
    first it did not have; from there, live brings the rest in order and no id is kept.

    >>> overlap = Overlap()
    >>> for message_id in "abc":
    ...     overlap.from_journal(message_id)
    >>> [overlap.from_live(message_id) for message_id in "bcdec"]
    [False, False, True, True, True]
    """

    def __init__(self) -> None:
        self._journalled: set[str] = set()

    def from_journal(self, message_id: str) -> None:
        self._journalled.add(message_id)

    def has(self, message_id: str) -> bool:
        return message_id in self._journalled

    def from_live(self, message_id: str) -> bool:
        """Whether to apply this live message."""
        if self._journalled:
            if message_id in self._journalled:
                return False
            self._journalled.clear()
        return True


class ResumedRun(CellRun):
    """A run started by the previous server, fed from the journal then live, once each."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._overlap = Overlap()
        self._held: list[dict[str, Any]] | None = []  # live messages, until caught up
        self._count: int | None = None
        self._failed = False

    def on_iopub(self, message: dict[str, Any]) -> None:
        if self._held is not None:
            self._held.append(message)
        else:
            self._live(message)

    def apply(self, message: dict[str, Any]) -> None:
        """Apply a message from the journal (remembered: live may bring it again)."""
        self._overlap.from_journal(str(message["header"].get("msg_id")))
        self._accept(message)

    def _live(self, message: dict[str, Any]) -> None:
        if self._overlap.from_live(str(message["header"].get("msg_id"))):
            self._accept(message)

    def _accept(self, message: dict[str, Any]) -> None:
        kind = message["header"]["msg_type"]
        if kind == "execute_input":
            count = message["content"].get("execution_count")
            self._count = count if isinstance(count, int) else None
        elif kind == "error":
            self._failed = True
        super().on_iopub(message)

    @property
    def count(self) -> int | None:
        return self._count

    def counted(self, execution_count: int | None) -> None:
        """The count the previous server recorded (its ``execute_input`` may be in no
        journal); one in the journal or live replaces it."""
        if execution_count is not None:
            self._count = execution_count

    @property
    def caught_up(self) -> bool:
        """The journal has given the first live message: from there, live has it all."""
        held = self._held
        return (
            held is not None
            and bool(held)
            and self._overlap.has(str(held[0]["header"].get("msg_id")))
        )

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def go_live(self) -> None:
        held, self._held = self._held or [], None
        for message in held:
            self._live(message)

    def _maybe_finish(self) -> None:
        # No execute reply comes (it went to the previous server): idle ends the run.
        if self._idle and not self.done.done():
            status = "error" if self._failed else "ok"
            self.end(RunOutcome(status, execution_count=self._count))

    def ending(self) -> RunEnd | None:
        """How the journal says the run ended (``None``: it had not)."""
        if not self._idle:
            return None
        return RunEnd("error" if self._failed else "ok", self._count)


async def catch_up(run: ResumedRun, segment: Path, *, live: bool) -> None:
    """Feed ``run`` the journal, then (``live``) what the kernel sends from now on."""
    from ...keeper.journal import read_segment

    offset = 0
    lost = False
    started = last_growth = time.monotonic()
    while True:
        messages, offset, cut = read_segment(segment, offset)
        lost = lost or cut
        for message in messages:
            run.apply(message)
        now = time.monotonic()
        if messages:
            last_growth = now
        if not live or run.caught_up or run.done.done():
            break
        quiet = now - last_growth >= CATCH_UP_QUIET
        if quiet and (not run.holding or now - started >= CATCH_UP_LIMIT):
            break
        await asyncio.sleep(0.05)
    if lost:
        run.writer.push(AppendStream("stderr", note_line(LINES_LOST)))
    run.go_live()


async def resume_run(
    queue: KernelQueue,
    entry: LedgerEntry,
    segment: Path | None,
    journalled: JournalRecord | None = None,
    *,
    gateway_kept_nothing: bool = False,
) -> bool:
    """Follow a run on a kernel kept through the restart; False if its cell moved on.

    ``segment``: the keeper's journal of the run's messages. A gateway kernel has none
    (``None``): the cell gets back what the output journal holds (``journalled``), then
    what comes from the gateway (it kept what the kernel sent while no server was up,
    unless ``gateway_kept_nothing``)."""
    job = taken_up_job(entry)
    run = queue.follow(entry, job, ResumedRun)
    assert isinstance(run, ResumedRun)
    taken_over(run, entry, queue.line.kernel_run)
    run.counted(entry.execution_count)

    def restart(notebook: YNotebook, ycell: Map) -> None:
        board.mark_started(notebook, ycell, job.run_id)
        shown = board.marker(notebook, job.cell_id)
        waiting = shown.input if shown is not None else None
        if waiting is not None:  # still shown: the kernel still waits for its answer
            run.pending_input = (waiting, prompt_header(waiting))

    await run.writer.start_run(job.run_id, then=restart)
    for op in journalled.ops if journalled is not None else []:
        run.writer.push(op)
    if segment is None:  # where the journal ends and what the gateway kept begins
        gap = GATEWAY_LOST if gateway_kept_nothing else GATEWAY_GAP
        run.writer.push(AppendStream("stderr", note_line(gap)))
    try:
        await queue.line.connect()
        live = True
    except Exception:  # the kernel is gone: the liveness check ends the run
        live = False
    if segment is None:
        run.go_live()
    else:
        await catch_up(run, segment, live=live)
    return True


def prompt_header(request: InputRequest) -> dict[str, Any]:
    """The header an answer to a prompt the previous server showed refers to.

    The kernel's ``input_request`` went to that server's stdin socket and is gone with it;
    the kernel takes the next ``input_reply`` on its stdin socket from any client, and its
    parent only tells the reply apart: the request's id, kept in the prompt's record.
    """
    return {"msg_id": request.request_id, "msg_type": "input_request"}


async def replay_ended_run(
    entry: LedgerEntry,
    segment: Path,
    docs: LiveDocuments,
    policy: OutputPolicy,
    log: logging.Logger,
    *,
    how: str,
    ended: Callable[[RunEnd], None] | None = None,
) -> int:
    """Write a run whose kernel ended with no server up into its cell; 1 if it did.

    ``how`` the kernel ended (see ``KeptKernels.how_ended``) says which note a run it cut
    off gets; ``ended`` is told how the run ended (for the run history)."""
    async with docs.pinned(entry.room_id):
        notebook = await docs.notebook(entry.room_id)
        if not board.owned_by(notebook, entry.cell_id, entry.run_id):
            return 0  # the cell ran again since
        writer = CellWriter(docs, entry.room_id, entry.cell_id, interval=0, log=log, policy=policy)
        job = CellJob(entry.room_id, entry.cell_id, "", entry.run_id, entry.by)
        run = ResumedRun(
            job, writer, on_display_update=writer.push, on_input_request=lambda *_: None
        )
        await writer.start_run(entry.run_id, then=lambda _, ycell: board.clear_execution(ycell))
        await catch_up(run, segment, live=False)
        ending = run.ending()
        if ending is None:
            note = {"orphaned": ORPHANED, "exited": DIED_AWAY}.get(how, CUT_OFF)
            ending = RunEnd("cut_off", run.count, note)
            writer.push(AppendStream("stderr", note_line(note)))

        def finish(notebook: YNotebook, ycell: Map) -> None:
            board.mark_done(
                notebook,
                ycell,
                run_id=entry.run_id,
                status=ending.status,
                execution_count=ending.execution_count,
                note=ending.note,
            )

        await writer.end_run(then=finish, ending=ending)
        await docs.saves.save(entry.room_id)
    if ended is not None:
        ended(ending)
    log.info("jupyter-loop replayed run %s of a kernel that ended", entry.run_id)
    return 1
