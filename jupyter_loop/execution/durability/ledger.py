"""A durable list of the runs in flight, so a server restart can close or follow them.

The shared document keeps run markers (``[*]``, queued) in the collaboration store, which
outlives the server; without a record of which runs the server owned, a restart would
leave cells showing ``[*]`` forever. So every change is on disk before the document
shows it: a run is listed before its cell is marked queued, and its execute request's id
right after the request goes to the kernel (a restarted server that kept the kernel
follows the run by that id). Each line also carries the run's record as it was asked for
and as it started (who, through what, the masked source, when: ``LedgerEntry``), so the
run history of a run a restart takes over or closes is that record, continued.

A run's end is written DROP_DELAY later: by then the output journal has the run's end
(it commits at once when a run ends), and a restart that finds the run listed replays it
from there (the run is over, never followed again); dropped at once, a kill in between
left a journal with no end and no run listed, and the finished run came back "cut off".
A save that holds the run whole ends its journal sooner than that (the next cell's output
saves the notebook): the end is then written first (:meth:`RunLedger.drop_now`), before
the journal goes. A run listed with no journal is a run still in flight; one listed after
its journal went came back with nothing replayed over its lines (chaos seed 2028, trial 69).

The runs a previous process left stay listed while a restarted server closes them, each
until the collaboration store holds its close (:meth:`RunLedger.keep_until_settled`): the
close's markers live in the store only, so a kill before the store wrote them, with the
run no longer listed, left the cell ``[*]`` for good (chaos seed 2031, trial 151).

Each change is one line appended to a log (``{"put": entry}`` for a run newly listed,
``{"set": {"run_id": …, <the fields that changed>}}`` after, ``{"drop": run_id}``): a write
of a few hundred bytes, whatever else is in flight; a run's source (its record) is
written when it is listed and again only if the kernel is handed another one. No fsync:
the ledger is for a server process that dies (SIGKILL, OOM), whose written pages the
system keeps (each line is written and flushed before the document shows the change); a
machine that loses power loses its kernels too. The log is rewritten with only what is in flight
when it has grown to several times that (and once the previous process's runs are dealt
with). Rejected: rewriting the whole list 0.2 s after a change (what this did before): a
kill in those 0.2 s left a cell ``[*]`` with nothing to close it (chaos seed 2027, trial
22), and rewriting it at every change costs a Run All of N cells N² entries written.

Example:
    >>> import logging, tempfile
    >>> path = Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> ledger = RunLedger(path, logging.getLogger("doc"))
    >>> ledger.add([LedgerEntry("room", "c1", "run1", "queued"),
    ...             LedgerEntry("room", "c2", "run2", "queued")])
    >>> ledger.mark_sent("run1", "k1", "msg1"); ledger.remove("run2")
    >>> [(e.run_id, e.state, e.msg_id) for e in RunLedger(path, logging.getLogger("doc")).load()]
    [('run1', 'running', 'msg1')]
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import IO, Any

from ...owner_only import open_private, private_dir, replace_private
from ...state_files import Damaged, DamagedFiles, expect, open_or_set_aside
from ..run_origin import KeptSource, RunOrigin


@dataclass(frozen=True)
class LedgerEntry:
    """A run in flight. Beside what a restart needs to close or follow it, the record of
    the run as it was asked for (who, through which channel and approval, the source asked
    for, when) and, once it went to the kernel, as it started (the source it was handed,
    when): a run taken over after a crash continues this record in the history. Its
    source is masked (:func:`.run_origin.kept_source`), as the history keeps it. Lines
    of an older server lack these fields: they read as their defaults."""

    room_id: str
    cell_id: str
    run_id: str
    state: str  # "queued" or "running"
    kernel_id: str = ""  # once handed to the kernel: where it runs ...
    msg_id: str = ""  # ... and its execute request (a kept kernel's run is followed again)
    by: str = ""
    approved_hash: str = ""  # a run approved for this source only (see ``CellJob``)
    execution_count: int | None = None  # once the kernel said it (a run taken up keeps it)
    channel: str = ""  # the rest of the run's origin (see ``RunOrigin``)
    turn: str = ""
    approval: str = ""
    client: str = ""
    run_all: bool = False
    source_hash: str = ""  # the source asked for, then the one the kernel was handed
    source: str = ""
    queued_at: float | None = None
    started_at: float | None = None  # when the kernel was handed the run

    @property
    def origin(self) -> RunOrigin | None:
        """Who started the run, through what (``None``: an older server's line)."""
        if not self.channel:
            return None
        return RunOrigin(self.by, self.channel, self.turn, self.approval, self.client, self.run_all)

    @property
    def kept(self) -> KeptSource | None:
        return KeptSource(self.source_hash, self.source) if self.source_hash else None


_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "execution_count": (int, type(None)),
    "run_all": bool,
    "queued_at": (int, float, type(None)),
    "started_at": (int, float, type(None)),
}
"""The ledger's fields that are not strings, and the JSON types each may hold."""


def _checked_fields(raw: Any, kind: str) -> dict[str, Any]:
    expect(raw, dict, kind)
    known = {f.name for f in dataclasses.fields(LedgerEntry)}
    if not set(raw) <= known:
        raise Damaged("a run in flight has a field the ledger never writes")
    for name, value in raw.items():
        expect(value, _FIELD_TYPES.get(name, str), name)
    return dict(raw)


def ledger_entry(raw: Any) -> LedgerEntry:
    """A run as the ledger wrote it; :class:`Damaged` if it is not one."""
    fields = _checked_fields(raw, "put")
    if not {"room_id", "cell_id", "run_id", "state"} <= set(fields):
        raise Damaged("a run in flight lacks a field the ledger always writes")
    return LedgerEntry(**fields)


def ledger_changes(raw: Any) -> dict[str, Any]:
    """The fields a ``set`` line changes, with the run they change; :class:`Damaged` if
    they are not the ledger's."""
    fields = _checked_fields(raw, "set")
    if "run_id" not in fields:
        raise Damaged("a change of a run in flight does not name its run")
    return fields


LEGACY_NAME = "runs.json"
"""The list as versions before the log wrote it (one JSON array): read once, then gone."""
DROP_DELAY = 0.5
"""Seconds between a run's end and its line leaving the ledger (see the module docstring)."""
COMPACT_FACTOR = 4
"""The log is rewritten when its lines outnumber the runs in flight this many times."""
COMPACT_SLACK = 256


class RunLedger:
    """Runs queued or running on this server, kept in one append-only log file."""

    def __init__(
        self, path: Path, log: logging.Logger, damaged: DamagedFiles | None = None
    ) -> None:
        self._path = path
        self._log = log
        self._damaged = damaged or DamagedFiles(log)
        self._entries: dict[str, LedgerEntry] = {}
        self._file: IO[str] | None = None
        self._lines = 0  # lines in the file (the previous process's included)
        self._ending: dict[str, LedgerEntry] = {}  # ended, still listed for DROP_DELAY
        self._timer: asyncio.TimerHandle | None = None
        self._journal_gone: set[str] = set()  # listed runs whose output journal went
        self._unsettled: dict[str, LedgerEntry] = {}  # the previous process's, being closed

    def load(self) -> list[LedgerEntry]:
        """What the previous server process left in flight."""
        found: dict[str, LedgerEntry] = {}
        legacy = self._path.with_name(LEGACY_NAME)
        for raw in _read_legacy(legacy, self._log):
            found[raw["run_id"]] = LedgerEntry(**raw)
        # A file this ledger never wrote is moved aside: the runs start empty.
        lines = open_or_set_aside(self._path, self._read_lines, self._damaged)
        for number, line in enumerate(lines, 1):
            try:
                change = json.loads(line)
            except ValueError as e:  # a line torn by a kill (then ended by the next process)
                self._log.warning("jupyter-loop ignores line %d of %s: %s", number, self._path, e)
                continue
            if "put" in change:
                entry = ledger_entry(change["put"])
                found[entry.run_id] = entry
            elif "set" in change:
                changed = ledger_changes(change["set"])
                listed = found.get(changed["run_id"])
                if listed is not None:  # else its put was torn: nothing to change
                    found[listed.run_id] = replace(listed, **changed)
            else:
                found.pop(change["drop"], None)
        self._lines = len(lines)
        return list(found.values())

    def _read_lines(self, path: Path) -> list[str]:
        """The file's lines, checked: every line that parses is a change of this ledger's
        shape (a torn line does not parse, and is skipped by :meth:`load`)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        lines = data.decode("ascii").splitlines()  # json.dumps writes ASCII only
        for line in lines:
            try:
                change = json.loads(line)
            except ValueError:
                continue
            if not isinstance(change, dict) or len(change) != 1:
                raise Damaged(f"a line of {path.name} is not a change of the runs in flight")
            if "put" in change:
                ledger_entry(change["put"])
            elif "set" in change:
                ledger_changes(change["set"])
            else:
                expect(change.get("drop"), str, "drop")
        return lines

    def add(self, entries: list[LedgerEntry]) -> None:
        for entry in entries:
            self._put(entry)

    def mark_running(self, run_id: str) -> None:
        entry = self._entries.get(run_id)
        if entry is not None:
            self._put(replace(entry, state="running"))

    def mark_sent(
        self,
        run_id: str,
        kernel_id: str,
        msg_id: str,
        source: KeptSource | None = None,
        started_at: float | None = None,
    ) -> None:
        """The run's execute request went to the kernel (``source``, at ``started_at``): a
        server that adopts the kernel after a crash finds the run's output by this
        message id, and records the run as it started."""
        entry = self._entries.get(run_id)
        if entry is not None:
            sent = replace(entry, state="running", kernel_id=kernel_id, msg_id=msg_id)
            if source is not None:
                sent = replace(sent, source_hash=source.hash, source=source.text)
            self._put(replace(sent, started_at=started_at))

    def mark_counted(self, run_id: str, execution_count: int) -> None:
        """The kernel counted the run (``execute_input``): a server that takes the run up
        after a crash, with no journal of the kernel's messages, ends it with this count."""
        entry = self._entries.get(run_id)
        if entry is not None:
            self._put(replace(entry, execution_count=execution_count))

    def in_flight(self) -> list[LedgerEntry]:
        """The runs this process has queued or running now."""
        return list(self._entries.values())

    def remove(self, run_id: str) -> None:
        entry = self._entries.pop(run_id, None)
        if run_id in self._journal_gone:  # nothing to wait for: the file holds the run
            self._journal_gone.discard(run_id)
            if entry is not None:
                self._append({"drop": run_id})
            return
        if entry is not None:
            self._ending[run_id] = entry
            if self._timer is None:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:  # no event loop (a script, a doctest): nothing to wait for
                    self._drop_ended()
                    return
                self._timer = loop.call_later(DROP_DELAY, self._drop_ended)

    def drop_now(self, run_ids: list[str]) -> None:
        """Write the ends of these ended runs now: their output journals are about to go.

        A run not settled yet (its end written, the queue not done with it) is dropped as
        soon as it is; a run a stopping server leaves listed on purpose stays listed (see
        ``ExecutionService.stop``): its cell's marker already says how it ended."""
        for run_id in run_ids:
            if self._ending.pop(run_id, None) is not None:
                self._append({"drop": run_id})
            elif run_id in self._entries:
                self._journal_gone.add(run_id)

    def _drop_ended(self) -> None:
        self._timer = None
        ended, self._ending = self._ending, {}
        for run_id in ended:
            self._append({"drop": run_id})

    def keep_until_settled(self, entries: list[LedgerEntry]) -> None:
        """Keep these runs of the previous process listed through :meth:`forget_previous`
        until :meth:`settled`: they are being closed, and a kill before the close is
        stored must leave them for the next start to close."""
        self._unsettled.update((entry.run_id, entry) for entry in entries)

    def settled(self, run_id: str) -> None:
        """A run of the previous process is closed, and the store holds its close."""
        if self._unsettled.pop(run_id, None) is not None:
            self._append({"drop": run_id})

    def forget_previous(self) -> None:
        """Drop what the previous process left (but the runs kept until settled); keep
        what this one has in flight."""
        self._rewrite()
        self._path.with_name(LEGACY_NAME).unlink(missing_ok=True)

    def flush(self) -> None:
        """Write the ends of runs now (every other change is written as it happens), and
        close the file."""
        if self._timer is not None:
            self._timer.cancel()
            self._drop_ended()
        if self._file is not None:
            self._file.close()
            self._file = None

    def _put(self, entry: LedgerEntry) -> None:
        self._ending.pop(entry.run_id, None)
        before = self._entries.get(entry.run_id)
        if before == entry:
            return  # listed as it is already (a run taken up, marked running again)
        self._entries[entry.run_id] = entry
        if before is None:
            self._append({"put": asdict(entry)})
            return
        # Only what changed: a run's record (its source) is not written at each step.
        changed = {
            f.name: getattr(entry, f.name)
            for f in fields(entry)
            if getattr(entry, f.name) != getattr(before, f.name)
        }
        self._append({"set": {"run_id": entry.run_id, **changed}})

    def _append(self, change: dict[str, Any]) -> None:
        if self._lines > COMPACT_FACTOR * len(self._entries) + COMPACT_SLACK:
            self._rewrite()  # it holds the change already made in memory
            return
        try:
            if self._file is None:
                self._file = self._open_for_appending()
            # One write call per line: a kill leaves at most the last line torn.
            self._file.write(json.dumps(change) + "\n")
            self._file.flush()
            self._lines += 1
        except OSError as e:
            self._log.warning("jupyter-loop could not record runs in %s: %s", self._path, e)

    def _open_for_appending(self) -> IO[str]:
        private_dir(self._path.parent)
        file: IO[str] = open_private(self._path, "a+", encoding="utf-8")
        if file.tell() > 0:
            file.seek(file.tell() - 1)
            if file.read(1) != "\n":  # a line torn by a kill: end it, or the next is lost too
                file.write("\n")
        return file

    def _rewrite(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        listed = [*self._entries.values(), *self._ending.values(), *self._unsettled.values()]
        lines = "".join(json.dumps({"put": asdict(e)}) + "\n" for e in listed)
        try:
            replace_private(self._path, lines)
            self._lines = len(listed)
        except OSError as e:
            self._log.warning("jupyter-loop could not record runs in %s: %s", self._path, e)


def _read_legacy(path: Path, log: logging.Logger) -> list[dict[str, Any]]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return [item for item in raw if isinstance(item, dict) and "run_id" in item]
    except FileNotFoundError:
        return []
    except (ValueError, TypeError) as e:
        log.warning("jupyter-loop ignores an unreadable run ledger %s: %s", path, e)
        return []


class NullLedger(RunLedger):
    """Keeps nothing: for services built without a data directory."""

    def __init__(self) -> None:
        super().__init__(Path(os.devnull), logging.getLogger(__name__))

    def load(self) -> list[LedgerEntry]:
        return []

    def forget_previous(self) -> None:
        return None

    def _append(self, change: dict[str, Any]) -> None:
        return None

    def _rewrite(self) -> None:
        return None
