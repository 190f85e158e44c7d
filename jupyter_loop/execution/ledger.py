"""A durable list of the runs in flight, so a server restart can close them properly.

The shared document keeps run markers (``[*]``, queued) in the YStore, which outlives
the server; without a record of which runs the server owned, a restart would leave
cells showing ``[*]`` forever. The ledger is a small JSON file rewritten atomically on
change (changes within ``delay`` seconds share one write); at start-up the recovery ends
every run it lists.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..private import private_dir


@dataclass(frozen=True)
class LedgerEntry:
    room_id: str
    cell_id: str
    run_id: str
    state: str  # "queued" or "running"
    kernel_id: str = ""  # once handed to the kernel: where it runs ...
    msg_id: str = ""  # ... and its execute request (a kept kernel's run is followed again)
    by: str = ""
    approved_hash: str = ""  # a run approved for this source only (see ``CellJob``)
    execution_count: int | None = None  # once the kernel said it (a run taken up keeps it)


class RunLedger:
    """Runs queued or running on this server, persisted in one JSON file."""

    def __init__(self, path: Path, log: logging.Logger, delay: float = 0.2) -> None:
        self._path = path
        self._log = log
        self._delay = delay
        self._entries: dict[str, LedgerEntry] = {}
        self._timer: asyncio.TimerHandle | None = None

    def load(self) -> list[LedgerEntry]:
        """What the previous server process left in flight."""
        try:
            raw = json.loads(self._path.read_text(encoding="utf-8"))
            return [LedgerEntry(**item) for item in raw]
        except FileNotFoundError:
            return []
        except (ValueError, TypeError) as e:
            self._log.warning("jupyter-loop ignores an unreadable run ledger %s: %s", self._path, e)
            return []

    def add(self, entries: list[LedgerEntry]) -> None:
        for entry in entries:
            self._entries[entry.run_id] = entry
        self._write_soon()

    def mark_running(self, run_id: str) -> None:
        entry = self._entries.get(run_id)
        if entry is not None:
            self._entries[run_id] = replace(entry, state="running")
            self._write_soon()

    def mark_sent(self, run_id: str, kernel_id: str, msg_id: str) -> None:
        """The run's execute request went to the kernel: a server that adopts the kernel
        after a crash finds the run's output by this message id."""
        entry = self._entries.get(run_id)
        if entry is not None:
            self._entries[run_id] = replace(entry, kernel_id=kernel_id, msg_id=msg_id)
            self._write_soon()

    def mark_counted(self, run_id: str, execution_count: int) -> None:
        """The kernel counted the run (``execute_input``): a server that takes the run up
        after a crash, with no journal of the kernel's messages, ends it with this count."""
        entry = self._entries.get(run_id)
        if entry is not None:
            self._entries[run_id] = replace(entry, execution_count=execution_count)
            self._write_soon()

    def in_flight(self) -> list[LedgerEntry]:
        """The runs this process has queued or running now."""
        return list(self._entries.values())

    def remove(self, run_id: str) -> None:
        if self._entries.pop(run_id, None) is not None:
            self._write_soon()

    def forget_previous(self) -> None:
        """Drop what the previous process left; keep what this one has in flight."""
        self.flush()

    def flush(self) -> None:
        """Write pending changes now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._write()

    def _write_soon(self) -> None:
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._delay, self.flush)

    def _write(self) -> None:
        data = json.dumps([asdict(entry) for entry in self._entries.values()])
        try:
            private_dir(self._path.parent)
            handle, temporary = tempfile.mkstemp(dir=self._path.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(data)
            os.replace(temporary, self._path)
        except OSError as e:
            self._log.warning("jupyter-loop could not record runs in %s: %s", self._path, e)


class NullLedger(RunLedger):
    """Keeps nothing: for services built without a data directory."""

    def __init__(self) -> None:
        super().__init__(Path(os.devnull), logging.getLogger(__name__))

    def load(self) -> list[LedgerEntry]:
        return []

    def _write_soon(self) -> None:
        return None

    def _write(self) -> None:
        return None
