"""A write-ahead journal of the outputs of runs in flight, so a crash loses (almost) nothing.

The shared document reaches the ``.ipynb`` only when it is saved, every few seconds while
a cell prints; after a crash jupyter_server_ydoc rebuilds a room from the file whenever
its YStore disagrees with it, so whatever came since the last save was lost. Every
output edit a cell's writer takes (already masked) is therefore also appended to a file
of the run's own, ``<run_id>.jsonl``: a header line, one line per edit, and an end line
once the run is over. An edit waits at most ``interval`` seconds for those that follow,
then all are written together (group commit) from a worker thread, and ``fsync``-ed
unless told not to, so the event loop never waits for the disk. Waiting first, rather
than writing the first edit at once, keeps the disk off a running cell's way. A run's
end is committed at once: tabs see the run over as its end is written, and a kill right
after must not cut off lines they saw as final (found by ``bench/chaos.py``).

After a restart, :func:`~.recovery.close_interrupted_runs` replays every journal left on
disk into its cell through the ordinary writer, so the reopened notebook and its file
hold everything that reached the server up to one commit before the kill. A journal is
removed once the notebook that holds its run has been saved after the run ended; a
replayed one, once the collaboration store also holds the replay's end (the run marks
live there only: a second kill before that is replayed again).

Example:
    >>> from ..outputs.ops import AppendStream
    >>> line = encode_op(AppendStream("stdout", "hi\\n"))
    >>> line
    {'op': 'stream', 'name': 'stdout', 'text': 'hi\\n'}
    >>> decode_op(line)
    AppendStream(name='stdout', text='hi\\n')
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...owner_only import FILE_MODE, private_dir
from ..outputs.ops import AppendOutput, AppendStream, ClearOutputs, OutputOp, UpdateDisplay

SUFFIX = ".jsonl"


def encode_op(op: OutputOp) -> dict[str, Any]:
    """One output edit as a JSON object (see :func:`decode_op`)."""
    if isinstance(op, AppendStream):
        return {"op": "stream", "name": op.name, "text": op.text}
    if isinstance(op, AppendOutput):
        return {"op": "output", "output": op.output, "display_id": op.display_id}
    if isinstance(op, ClearOutputs):
        return {"op": "clear", "wait": op.wait}
    return {"op": "update", "display_id": op.display_id, "data": op.data, "meta": op.metadata}


def decode_op(line: dict[str, Any]) -> OutputOp:
    """The edit :func:`encode_op` wrote; ``ValueError`` for anything else.

    >>> decode_op({"op": "clear", "wait": True})
    ClearOutputs(wait=True)
    """
    kind = line.get("op")
    if kind == "stream":
        return AppendStream(str(line["name"]), str(line["text"]))
    if kind == "output" and isinstance(line.get("output"), dict):
        display_id = line.get("display_id")
        return AppendOutput(line["output"], str(display_id) if display_id else None)
    if kind == "clear":
        return ClearOutputs(bool(line.get("wait")))
    if kind == "update":
        return UpdateDisplay(str(line["display_id"]), dict(line["data"]), dict(line["meta"]))
    raise ValueError(f"not an output edit: {kind!r}")


@dataclass(frozen=True)
class RunEnd:
    """How a journalled run ended (absent: it was cut off)."""

    status: str
    execution_count: int | None = None
    note: str | None = None


@dataclass(frozen=True)
class JournalRecord:
    """What a journal left on disk says about one run."""

    room_id: str
    cell_id: str
    run_id: str
    ops: list[OutputOp] = field(default_factory=list)
    end: RunEnd | None = None


def read_journal(lines: list[str]) -> JournalRecord | None:
    """Parse a journal's lines; a torn last line (the kill came mid-write) is ignored.

    >>> text = [json.dumps({"run": {"room_id": "r", "cell_id": "c", "run_id": "u"}}),
    ...         json.dumps({"op": "stream", "name": "stdout", "text": "1\\n"}), '{"op": "str']
    >>> record = read_journal(text)
    >>> record.cell_id, record.ops, record.end
    ('c', [AppendStream(name='stdout', text='1\\n')], None)
    """
    if not lines:
        return None
    try:
        header = json.loads(lines[0])["run"]
        record = JournalRecord(str(header["room_id"]), str(header["cell_id"]), header["run_id"])
    except (ValueError, KeyError, TypeError):
        return None
    for raw in lines[1:]:
        try:
            line = json.loads(raw)
            if "end" in line:
                end = line["end"]
                count = end.get("execution_count")
                return JournalRecord(
                    record.room_id,
                    record.cell_id,
                    record.run_id,
                    record.ops,
                    RunEnd(str(end["status"]), count if isinstance(count, int) else None,
                           end.get("note")),
                )  # fmt: skip
            record.ops.append(decode_op(line))
        except (ValueError, KeyError, TypeError):
            break  # a torn write: everything before it is good
    return record


class RunJournal:
    """The journal of one run; lines wait in memory until the next group commit."""

    def __init__(self, owner: OutputJournal, room_id: str, cell_id: str, run_id: str) -> None:
        self.room_id = room_id
        self.run_id = run_id
        self.path = owner.directory / f"{run_id}{SUFFIX}"
        self.ended_at: float | None = None
        self._owner = owner
        self._pending: list[str] = []
        self._size = 0
        self._full = False
        self._fd: int | None = None
        header = {"run": {"room_id": room_id, "cell_id": cell_id, "run_id": run_id}}
        self._add(json.dumps(header))

    def append(self, op: OutputOp) -> None:
        """Journal an output edit (past the size limit, edits are no longer kept)."""
        if self.ended_at is None and not self._full:
            self._add(json.dumps(encode_op(op), ensure_ascii=False))

    def end(self, ending: RunEnd) -> None:
        """The run is over: no more edits; the journal goes once its notebook is saved."""
        if self.ended_at is None:
            self._add(json.dumps({"end": ending.__dict__}))
            self.ended_at = time.monotonic()
            self._owner.commit_now()

    def _add(self, line: str) -> None:
        limit = self._owner.max_run_bytes
        self._size += len(line) + 1
        if limit is not None and self._size > limit:
            self._full = True
        self._pending.append(line)
        self._owner.dirty(self)

    @property
    def full(self) -> bool:
        """Whether the run outgrew the journal's limit (later edits are not kept)."""
        return self._full

    def pending(self) -> list[str]:
        """The lines waiting for the next commit."""
        return list(self._pending)

    def take(self) -> bytes:
        lines, self._pending = self._pending, []
        return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""

    def write(self, data: bytes, sync: bool) -> None:
        """Append ``data`` to the file (in a worker thread)."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
        os.write(self._fd, data)
        if sync:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class OutputJournal:
    """The journals of runs in flight, committed together by one owned background task."""

    def __init__(
        self,
        directory: Path,
        log: logging.Logger,
        *,
        fsync: bool = True,
        interval: float = 0.2,
        max_run_bytes: int | None = None,
    ) -> None:
        self.directory = directory
        self.max_run_bytes = max_run_bytes
        self._log = log
        self._fsync = fsync
        self._interval = interval
        self._open: dict[str, RunJournal] = {}
        self._dirty: dict[str, RunJournal] = {}
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._worker: asyncio.Task[None] | None = None
        self._doomed: list[RunJournal] = []  # removed by the commit, after its writes
        self._stopping = False
        # Cuts a commit's wait short: the server stops, or a run ended. A run the tabs
        # see ended must not lose its last lines to a kill within the commit interval.
        self._now = asyncio.Event()
        self._failed = False
        self._letting_go: list[Callable[[list[str]], None]] = []

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        private_dir(self.directory)
        self._worker = asyncio.ensure_future(self._commit_loop())

    async def stop(self) -> None:
        """Commit what is pending, then close the files (journals stay for the next start)."""
        self._stopping = True
        self._now.set()
        self._wake.set()
        if self._worker is not None:
            await asyncio.gather(self._worker, return_exceptions=True)
            self._worker = None
        for journal in self._open.values():
            journal.close()
        self._open.clear()

    # -- runs --------------------------------------------------------------------------

    def open(self, room_id: str, cell_id: str, run_id: str) -> RunJournal:
        journal = RunJournal(self, room_id, cell_id, run_id)
        self._open[run_id] = journal
        return journal

    def dirty(self, journal: RunJournal) -> None:
        self._dirty[journal.run_id] = journal
        self._wake.set()

    def before_removing(self, hook: Callable[[list[str]], None]) -> None:
        """Call ``hook(run_ids)`` before the journals of those ended runs are removed (the
        run ledger lets go of them first: a run it lists always has its journal)."""
        self._letting_go.append(hook)

    def commit_now(self) -> None:
        """Commit what is pending without waiting out the interval (a run ended)."""
        self._now.set()
        self._wake.set()

    def saved(self, room_id: str, started: float) -> None:
        """The room was saved from a state taken at ``started``: runs of it that had ended
        by then are in the file and their journals can go."""
        for journal in list(self._open.values()):
            ended = journal.ended_at
            if journal.room_id == room_id and ended is not None and ended <= started:
                self._open.pop(journal.run_id, None)
                self._doomed.append(journal)
                self._wake.set()

    def leftovers(self) -> list[JournalRecord]:
        """The journals a previous server process left (its runs, not yet in a file)."""
        records = []
        for path in sorted(self.directory.glob(f"*{SUFFIX}")):
            if path.stem in self._open:
                continue
            try:
                record = read_journal(path.read_text(encoding="utf-8").splitlines())
            except OSError as e:
                self._log.warning("jupyter-loop cannot read the output journal %s: %s", path, e)
                continue
            if record is None:
                remove(path, self._log)
            else:
                records.append(record)
        return records

    async def ops_so_far(self, journal: RunJournal) -> list[OutputOp] | None:
        """Every output edit ``journal``'s run made until now; ``None`` when the journal
        does not hold them all (past its size limit, or the disk failed it)."""
        async with self._lock:  # no commit is under way: file + pending lines = the run
            if journal.full or self._failed:
                return None
            try:
                on_disk = await asyncio.to_thread(_read_lines, journal.path)
            except OSError as e:
                self._log.warning("jupyter-loop cannot read the output journal: %s", e)
                return None
            # No await from here: the pending lines and the caller's model stay in step.
            record = read_journal(on_disk + journal.pending())
        return list(record.ops) if record is not None else None

    def forget_run(self, run_id: str) -> None:
        """A left-over journal is done with: its run is replayed and the store holds that,
        or another journal covers the run (a kept kernel's)."""
        if run_id not in self._open:
            remove(self.directory / f"{run_id}{SUFFIX}", self._log)

    # -- group commit ------------------------------------------------------------------

    async def _commit_loop(self) -> None:
        # The only task that touches the files: writes and removals never race.
        while not self._stopping:
            await self._wake.wait()
            try:  # later edits share this commit
                await asyncio.wait_for(self._now.wait(), self._interval)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
            if not self._stopping:
                self._now.clear()
            await self._commit()
        await self._commit()

    async def commit(self) -> None:
        """Write what is pending now (before a save: the journal stays ahead of the file,
        so a replay never holds less than the file it replaces)."""
        await self._commit()

    async def _commit(self) -> None:
        async with self._lock:  # one writer thread at a time: lines stay in order
            batch = [(journal, journal.take()) for journal in self._dirty.values()]
            self._dirty.clear()
            doomed, self._doomed = self._doomed, []
            if doomed:
                for hook in self._letting_go:
                    hook([journal.run_id for journal in doomed])
            if batch or doomed:
                await asyncio.to_thread(self._write, batch, doomed)

    def _write(self, batch: list[tuple[RunJournal, bytes]], doomed: list[RunJournal]) -> None:
        for journal, data in batch:
            if not data:
                continue
            try:
                journal.write(data, self._fsync)
            except OSError as e:
                if not self._failed:  # once: a full disk must not flood the log
                    self._log.warning("jupyter-loop cannot write its output journal: %s", e)
                self._failed = True
        for journal in doomed:
            journal.close()
            remove(journal.path, self._log)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:  # nothing committed yet: every line is pending
        return []


def remove(path: Path, log: logging.Logger) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as e:
        log.warning("jupyter-loop could not remove the output journal %s: %s", path, e)
