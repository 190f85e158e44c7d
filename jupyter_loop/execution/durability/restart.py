"""After a restart: the runs a previous server process left in flight, taken up or ended.

A run on a kernel a keeper kept through the restart, or on a gateway kernel the gateway
still runs (``gateway_rejoin``), is followed again (``kept_runs``), and
the cells queued behind it are queued again, in their order; a run whose kept kernel
ended meanwhile is replayed from the keeper's journal; every other one is closed
(``recovery``: replayed from the output journal, or marked cut off). The execution
service calls this once, as it starts; lists of runs in flight wait for it. A run followed
again keeps its record (``kept_runs.taken_up_job``: same run, origin, source and start, marked
taken over); one closed here is written into the run history from the ledger's record.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ...document import LiveDocuments
from ...errors import JupyterLoopError
from ..outputs.writer import OutputPolicy
from ..run import CellJob
from ..run_origin import RUNS_API, RunEntry, RunOrigin
from .gateway_rejoin import rejoin_gateway_kernels
from .kept_runs import replay_ended_run, resume_run, taken_up_job
from .ledger import LedgerEntry, RunLedger
from .recovery import CUT_OFF, close_interrupted_runs
from .wal import RunEnd

if TYPE_CHECKING:
    from ...keeper.adoption import KeptKernels
    from ..history import RunHistory
    from ..queue import KernelQueue


async def take_up_left_runs(
    ledger: RunLedger,
    kept: KeptKernels | None,
    kernels: Any,
    queue_for: Callable[[str], KernelQueue],
    docs: LiveDocuments,
    outputs: OutputPolicy,
    log: logging.Logger,
    history: RunHistory | None = None,
) -> int:
    """Follow, replay or close every run ``ledger`` lists from the last process; returns
    how many cells changed. A run that is not followed again gets its record in
    ``history`` (unless the last process wrote it): how it ended, with the record the
    ledger kept of it as asked and started."""
    entries = ledger.load()
    in_use = {entry.kernel_id for entry in entries if entry.kernel_id}
    rejoined = await rejoin_gateway_kernels(in_use, kernels, log)
    adopted = set(kept.adopted if kept is not None else ()) | rejoined.kernel_ids
    journal = outputs.journal
    # A gateway kernel has no keeper's journal: the output journal gives its run back.
    journalled = {r.run_id: r for r in journal.leftovers()} if journal is not None else {}
    # A run whose end is journalled had ended; the ledger had not yet said so (it does
    # DROP_DELAY later) when the server died: replayed from the journal, never followed
    # again (its kernel is idle, and its keeper let go of its copy once the run ended).
    over = {run_id for run_id, record in journalled.items() if record.end is not None}
    left = [entry for entry in entries if entry.run_id not in over]
    resumed, queued, ended, closed = sort_interrupted(left, adopted, kept, kernels)
    closed += [entry for entry in entries if entry.run_id in over]
    if journal is not None:  # what the runs taken up had is in hand: no replay closes them
        # A run queued again never went to the kernel: its journal holds only its start
        # (the cell cleared); replayed, it wrote "cut off" over the run that then ran.
        for entry in resumed + ended + queued:
            journal.forget_run(entry.run_id)

    # Listed until their close is stored: a kill before that leaves them to the next start.
    ledger.keep_until_settled(ended + closed)
    closes: dict[str, list[str]] = {}  # room: the runs closed in it

    async def settle(room_id: str, run_id: str) -> None:
        closes.setdefault(room_id, []).append(run_id)

    changed = 0
    for entry in resumed:
        try:
            queue = queue_for(entry.kernel_id)
            if entry.kernel_id in rejoined.kernel_ids:  # no keeper: the output journal, then live
                changed += await resume_run(
                    queue,
                    entry,
                    None,
                    journalled.get(entry.run_id),
                    gateway_kept_nothing=entry.kernel_id in rejoined.kept_nothing,
                )
            else:  # the keeper's journal has every message of the run
                assert kept is not None
                segment = kept.segment(entry.kernel_id, entry.msg_id)
                changed += await resume_run(queue, entry, segment)
        except Exception:
            log.exception("jupyter-loop could not follow run %s again", entry.run_id)
    for kernel_id in dict.fromkeys(entry.kernel_id for entry in queued):
        queue_for(kernel_id).submit(
            [_queued_again(entry) for entry in queued if entry.kernel_id == kernel_id]
        )
    ledger.forget_previous()
    if kept is not None:
        replay = dataclasses.replace(outputs, journal=None)
        for entry in ended:
            segment = kept.segment(entry.kernel_id, entry.msg_id)
            how = kept.how_ended(entry.kernel_id)
            try:
                path = docs.path_of(entry.room_id) or ""
                changed += await replay_ended_run(
                    entry, segment, docs, replay, log, how=how,
                    ended=partial(_record_if, history, entry, path),
                )  # fmt: skip
                await settle(entry.room_id, entry.run_id)
            except JupyterLoopError as e:
                log.info("jupyter-loop could not replay %s: %s", entry.run_id, e)
        kept.forget_ended()
    changed += await close_interrupted_runs(
        closed, docs, log, journal=outputs.journal, policy=outputs, settle=settle
    )
    if history is not None:
        for entry in closed:
            record = journalled.get(entry.run_id)
            if record is not None and record.end is not None:
                end = record.end
            elif entry.state == "running":
                end = RunEnd("cut_off", entry.execution_count, CUT_OFF)
            else:
                end = RunEnd("aborted")
            record_left_run(history, entry, docs.path_of(entry.room_id) or "", end)
    # Once per room, after every close: the cells do not wait on the store one by one.
    for room_id, run_ids in closes.items():
        if await docs.stored(room_id):
            for run_id in run_ids:
                ledger.settled(run_id)
                if journal is not None:
                    journal.forget_run(run_id)
    return changed


def sort_interrupted(
    entries: list[LedgerEntry], adopted: set[str], kept: KeptKernels | None, kernels: Any
) -> tuple[list[LedgerEntry], list[LedgerEntry], list[LedgerEntry], list[LedgerEntry]]:
    """The runs a previous server left: to follow again (their kernel was adopted: kept by
    a keeper, or taken back from a gateway), to queue again (waiting for such a kernel),
    to replay from a keeper's journal (their kept kernel ended meanwhile), to close."""
    resumed: list[LedgerEntry] = []
    queued: list[LedgerEntry] = []
    ended: list[LedgerEntry] = []
    closed: list[LedgerEntry] = []
    for entry in entries:
        taken = entry.kernel_id in adopted
        if taken and entry.kernel_id not in kernels:
            closed.append(entry)
        elif taken and entry.state == "running" and entry.msg_id:
            resumed.append(entry)
        elif taken and not entry.msg_id:  # never sent: the ledger lists a send at once
            queued.append(entry)
        elif entry.state == "running" and entry.msg_id and kept and entry.kernel_id in kept.ended:
            ended.append(entry)
        else:
            closed.append(entry)
    return resumed, queued, ended, closed


def record_left_run(history: RunHistory, entry: LedgerEntry, path: str, end: RunEnd) -> None:
    """Put in the history a run the last process left listed and this one closed, as the
    ledger recorded it (a kill in the half second between a run's end and the history's
    next write lost it, and a run cut off by the kill was recorded nowhere). Nothing if
    the last process wrote it. Its kernel's life is unknown (``kernel_run`` empty): a
    kernel that outlived a server restart counts as a new one."""
    if history.has_run(entry.room_id, entry.cell_id, entry.run_id):
        return
    history.record(
        RunEntry(
            room_id=entry.room_id,
            path=path,
            cell_id=entry.cell_id,
            run_id=entry.run_id,
            origin=entry.origin or RunOrigin(entry.by, RUNS_API),
            source_hash=entry.source_hash,
            source=entry.source,
            kernel_id=entry.kernel_id,
            kernel_run="",
            queued=entry.queued_at if entry.queued_at is not None else time.time(),
            started=entry.started_at if entry.msg_id else None,
            ended=time.time(),
            status=end.status,
            note=end.note,
            execution_count=end.execution_count,
        )
    )


def _record_if(history: RunHistory | None, entry: LedgerEntry, path: str, end: RunEnd) -> None:
    if history is not None:
        record_left_run(history, entry, path, end)


def _queued_again(entry: LedgerEntry) -> CellJob:
    # The source it runs is the cell's when it is handed over, as for any job that waited;
    # its record (who, through what, when asked) is the one the ledger kept.
    return taken_up_job(entry)
