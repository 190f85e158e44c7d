"""Where one server process's runs end and the next one's begin.

Runs outlive the process that started them (a kept kernel goes on running; a killed
process leaves its cells marked), so each process has two moments that matter to them:

- **its start**, when it takes up what the last process left (``restart``) before it
  answers any list of runs in flight: until then the cells still show the old marks, and
  a list would miss a run a kept kernel goes on with;
- **its stop**, when the runs in flight are noted *before* anything else stops and stay
  listed in the ledger for the next start, which closes those its file still shows open.

Rejected: letting each run drop itself from the ledger as the stop ends it. The assistant
and the MCP endpoint stop before the runs, and a call of theirs cut short drops the runs it
queued, while jupyter_server_ydoc may free (and save) the rooms with the runs' marks still
on: their ends would reach no store and the next start would find nothing to close (chaos
seed 2039 trial 810, a cell left ``[*]`` after an MCP run and a SIGTERM).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection

from .ledger import LedgerEntry, RunLedger

RECOVERY_WAIT = 30.0
"""Seconds a list of runs in flight waits for the runs a previous server left to be taken
up (the server does that as it starts: a kept kernel's journal is read back first)."""


class ProcessBoundary:
    """The runs' side of a server process's start and stop, kept in the run ledger."""

    def __init__(self, ledger: RunLedger) -> None:
        self._ledger = ledger
        self._taken_up = asyncio.Event()
        self._listed_at_stop: dict[str, LedgerEntry] = {}

    async def take_up(self, left_runs: Callable[[], Awaitable[int]]) -> int:
        """Take up the runs the last process left (``left_runs`` does); returns how many
        cells changed. Whatever happens, lists of runs in flight stop waiting."""
        try:
            return await left_runs()
        finally:
            self._taken_up.set()

    async def taken_up(self) -> None:
        """Wait, at most ``RECOVERY_WAIT`` seconds, until :meth:`take_up` is done."""
        if self._taken_up.is_set():
            # Every run request asks: ``wait_for`` would make a task and let the loop turn,
            # a millisecond between a Shift-Enter and its kernel on a 2-core machine.
            return
        try:
            await asyncio.wait_for(self._taken_up.wait(), RECOVERY_WAIT)
        except asyncio.TimeoutError:
            pass

    def stopping(self, leaving: Collection[str]) -> None:
        """The server begins to stop: the runs in flight now stay listed for the next
        start, whatever ends them before the runs stop."""
        self._listed_at_stop = self._in_flight_but(leaving)

    def left_to_next(self, leaving: Collection[str]) -> list[LedgerEntry]:
        """The runs the next start must close: those in flight when the stop began or now,
        but those on the kernels in ``leaving`` (kept running: the next start follows them
        again from their own ledger rows)."""
        return list({**self._listed_at_stop, **self._in_flight_but(leaving)}.values())

    def hand_over(self, left: list[LedgerEntry]) -> None:
        """List ``left`` for the next start, once the stop has ended them here."""
        self._ledger.add(left)
        self._ledger.flush()

    def _in_flight_but(self, leaving: Collection[str]) -> dict[str, LedgerEntry]:
        return {run.run_id: run for run in self._ledger.in_flight() if run.kernel_id not in leaving}
