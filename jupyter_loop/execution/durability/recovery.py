"""After a server restart: end the runs the previous process left in flight.

Their markers may have come back with the room (from the YStore), and the file holds
their outputs only up to its last save. A run with an output journal (:mod:`.wal`) gets
its outputs back from it, replayed through the ordinary writer (masked, within the
budget, the full output stored), so the cell holds everything that reached the server
up to one journal commit before the crash. The cell that was running then gets a
visible note that its run was cut off; a run that had ended but was not saved yet gets
its ending (count, status) back; queued cells simply go back to idle.

A notebook whose file someone replaced between the last process and this one's load of it
(a ``git checkout``; ``document.known_files`` tells, asked once the room is loaded) keeps
the file's outputs: the file came last, as it wins when it changes under a running server.
Its runs are closed with a note on their marks and nothing written into the cells.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable

from jupyter_ydoc import YNotebook
from pycrdt import Map

from ...document import LiveDocuments, find_cell, writing
from ...errors import JupyterLoopError
from .. import board
from ..outputs.ops import AppendStream
from ..outputs.writer import CellWriter, OutputPolicy
from .ledger import LedgerEntry
from .wal import JournalRecord, OutputJournal, RunEnd

CUT_OFF = "This run was cut off by a restart of the Jupyter server; its later output is lost."
FILE_CAME_LAST = (
    "The notebook file was replaced while the Jupyter server was down: this run's output "
    "was not put back over it."
)

Settle = Callable[[str, str], Awaitable[None]]
"""Called with a run's room and run id once the run is closed (or found closed): its line
may leave the run ledger, and its output journal may go, once the store holds the close
(``restart``). Not at once: the file holds the replay, but the room's run marks live in
the store only; a kill before the store wrote them left marks of a run in flight over the
file's whole output, with no journal to replay, and the next start closed the ended run as
cut off (chaos seed 2040, trial 935)."""


async def _nothing_to_settle(room_id: str, run_id: str) -> None:
    return None


async def close_interrupted_runs(
    entries: list[LedgerEntry],
    docs: LiveDocuments,
    log: logging.Logger,
    *,
    journal: OutputJournal | None = None,
    policy: OutputPolicy | None = None,
    settle: Settle = _nothing_to_settle,
) -> int:
    """Mark every listed run as ended, replaying journals; returns how many cells changed."""
    records = journal.leftovers() if journal is not None else []
    replayed = {record.run_id for record in records}
    # Replays write through a writer that journals nothing (the journal being replayed).
    replay_policy = dataclasses.replace(policy or OutputPolicy(), journal=None)
    changed = 0
    for record in records:
        try:
            changed += await _replay(record, docs, replay_policy, log, settle)
        except JupyterLoopError as e:  # its cell or notebook is gone: nothing to replay into
            log.info("jupyter-loop could not replay run %s: %s", record.run_id, e.message)
            if journal is not None:
                journal.forget_run(record.run_id)
    for entry in entries:
        if entry.run_id in replayed:
            continue
        try:
            changed += await _close(entry, docs, log, settle)
        except JupyterLoopError as e:
            log.info("jupyter-loop could not close run %s: %s", entry.run_id, e.message)
    return changed


async def _replay(
    record: JournalRecord,
    docs: LiveDocuments,
    policy: OutputPolicy,
    log: logging.Logger,
    settle: Settle,
) -> int:
    async with docs.pinned(record.room_id):
        notebook = await docs.notebook(record.room_id)
        if not board.owned_by(notebook, record.cell_id, record.run_id) or _ended_in_store(
            notebook, record
        ):
            await settle(record.room_id, record.run_id)
            return 0
        if docs.file_replaced(record.room_id):
            status = record.end.status if record.end is not None else "cut_off"
            return await _leave_to_file(
                notebook, record.room_id, record.cell_id, record.run_id, status, settle, log
            )
        writer = CellWriter(
            docs, record.room_id, record.cell_id, interval=0, log=log, policy=policy
        )
        # The run cleared the cell when it started: its journal is the whole output, and
        # replaces what the file kept of it.
        await writer.start_run(record.run_id, then=lambda _, ycell: board.clear_execution(ycell))
        for op in record.ops:
            writer.push(op)
        ending = record.end or RunEnd("cut_off", note=CUT_OFF)
        if record.end is None:
            writer.push(AppendStream("stderr", f"[jupyter-loop] {CUT_OFF}\n"))
        await writer.end_run(then=lambda nb, ycell: _mark(nb, ycell, record.run_id, ending))
        await docs.saves.save(record.room_id)
        await settle(record.room_id, record.run_id)
    log.info("jupyter-loop replayed run %s of cell %s", record.run_id, record.cell_id)
    return 1


async def _close(
    entry: LedgerEntry, docs: LiveDocuments, log: logging.Logger, settle: Settle
) -> int:
    async with docs.pinned(entry.room_id):
        notebook = await docs.notebook(entry.room_id)
        if not _still_open(notebook, entry.cell_id, entry.run_id):
            await settle(entry.room_id, entry.run_id)
            return 0
        if docs.file_replaced(entry.room_id):
            status = "cut_off" if entry.state == "running" else "aborted"
            return await _leave_to_file(
                notebook, entry.room_id, entry.cell_id, entry.run_id, status, settle, log
            )
        if entry.state == "running":
            ending = RunEnd("cut_off", note=CUT_OFF)
            writer = CellWriter(docs, entry.room_id, entry.cell_id, interval=0, log=log)
            writer.push(AppendStream("stderr", f"[jupyter-loop] {CUT_OFF}\n"))
            await writer.flush(then=lambda nb, ycell: _mark(nb, ycell, entry.run_id, ending))
        else:
            _, ycell = find_cell(notebook, entry.cell_id)
            with writing(notebook):
                _mark(notebook, ycell, entry.run_id, RunEnd("aborted"))
        await docs.saves.save(entry.room_id)
        await settle(entry.room_id, entry.run_id)
    log.info("jupyter-loop closed run %s of cell %s", entry.run_id, entry.cell_id)
    return 1


def _ended_in_store(notebook: YNotebook, record: JournalRecord) -> bool:
    """Whether the room (loaded from the store) already shows the journalled run ended: its
    end and its last outputs are one transaction, so the store holds the run whole. What
    the cell shows since (a checkout the room reloaded, chaos seed 2032 trial 228) came
    later and stays."""
    marker = board.marker(notebook, record.cell_id)
    ended = marker is not None and marker.state == board.DONE
    return (
        record.end is not None and ended and marker is not None and marker.run_id == record.run_id
    )


def _still_open(notebook: YNotebook, cell_id: str, run_id: str) -> bool:
    """Whether a run the ledger lists still shows as queued or running: a clean stop
    leaves its runs listed (its room may have been freed before it ended them), and one
    whose end its room did save is not closed twice."""
    if not board.owned_by(notebook, cell_id, run_id):
        return False  # the cell ran again since: that later run owns its markers
    marker = board.marker(notebook, cell_id)
    if marker is not None:
        return marker.state != board.DONE
    _, ycell = find_cell(notebook, cell_id)  # no marks kept (a room rebuilt from the file)
    return ycell.get("execution_state") not in ("idle", None)


async def _leave_to_file(
    notebook: YNotebook,
    room_id: str,
    cell_id: str,
    run_id: str,
    status: str,
    settle: Settle,
    log: logging.Logger,
) -> int:
    """End the run on the cell's marks only: its outputs and count are the file's. Nothing
    is saved: the file stays as it was written."""
    _, ycell = find_cell(notebook, cell_id)
    with writing(notebook):
        board.mark_done(notebook, ycell, run_id=run_id, status=status, note=FILE_CAME_LAST)
    await settle(room_id, run_id)
    log.info("jupyter-loop left run %s of cell %s to the replaced file", run_id, cell_id)
    return 1


def _mark(notebook: YNotebook, ycell: Map, run_id: str, ending: RunEnd) -> None:
    board.mark_done(
        notebook,
        ycell,
        run_id=run_id,
        status=ending.status,
        execution_count=ending.execution_count,
        note=ending.note,
    )
