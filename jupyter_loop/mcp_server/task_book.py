"""The MCP tasks of outside agents, kept on disk: one small owner-only JSON file each.

A task is a long ``run_cells`` call an agent polls instead of waiting on (``tasks``). Its
record must outlive the client that made it (a client polls again after its restart) and
the server (a restarted server still answers for it), so every change is written whole to
its file before it is told (``private.replace_private``: the old file or the new one, never
half). Records expire ``ttl`` seconds after they were made, as the task said they would.

Rejected: a table in one of the server's SQLite files. Tasks are few, written a handful of
times each and read by id; a file per task needs no schema and no lock.

Example:
    >>> import tempfile
    >>> book = TaskBook(Path(tempfile.mkdtemp()), ttl=60)
    >>> made = book.add(TaskRecord.working("ada", "a.ipynb", ["c1"], now=1000.0))
    >>> book.get(made.task_id, now=1030.0).status
    'working'
    >>> book.get(made.task_id, now=1061.0) is None  # expired, and gone
    True
    >>> book.get("../secrets", now=0.0) is None  # an id is never a path
    True
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..owner_only import private_dir, replace_private

WORKING = "working"
COMPLETED = "completed"
CANCELLED = "cancelled"
TERMINAL = frozenset({COMPLETED, CANCELLED})
_TASK_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


@dataclass(frozen=True)
class TaskRecord:
    """One task: whose it is, what it runs, how far it got and, once done, its result
    (the ``CallToolResult`` the call would have answered, in its wire form)."""

    task_id: str
    principal: str
    path: str
    cell_ids: tuple[str, ...]
    created: float
    updated: float
    status: str
    message: str
    result: dict[str, Any] | None = None

    @classmethod
    def working(
        cls,
        principal: str,
        path: str,
        cell_ids: list[str],
        message: str = "Running the cells.",
        now: float | None = None,
    ) -> TaskRecord:
        now = time.time() if now is None else now
        return cls(
            task_id=secrets.token_urlsafe(18),
            principal=principal,
            path=path,
            cell_ids=tuple(cell_ids),
            created=now,
            updated=now,
            status=WORKING,
            message=message,  # an approval is waited for only when one is needed
        )

    def ended(self, status: str, message: str, result: dict[str, Any] | None) -> TaskRecord:
        return dataclasses.replace(
            self, status=status, message=message, result=result, updated=time.time()
        )

    def wire(self, ttl: float, poll_seconds: float) -> dict[str, Any]:
        """The spec's ``Task`` (with its ``result`` once completed).

        >>> record = TaskRecord("t" * 16, "ada", "a.ipynb", ("c1",), 0.0, 1.5, "working", "")
        >>> record.wire(ttl=60, poll_seconds=1)["lastUpdatedAt"]
        '1970-01-01T00:00:01.500000Z'
        """
        found: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "statusMessage": self.message,
            "createdAt": _iso(self.created),
            "lastUpdatedAt": _iso(self.updated),
            "ttlMs": int(ttl * 1000),
            "pollIntervalMs": int(poll_seconds * 1000),
        }
        if self.status == COMPLETED and self.result is not None:
            found["result"] = self.result
        return found


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class TaskBook:
    """Task records in ``folder`` (owner-only), each kept ``ttl`` seconds."""

    def __init__(self, folder: Path, ttl: float) -> None:
        self.folder = folder
        self.ttl = ttl

    def add(self, record: TaskRecord) -> TaskRecord:
        private_dir(self.folder)
        self.put(record)
        return record

    def put(self, record: TaskRecord) -> None:
        fields = dataclasses.asdict(record)
        replace_private(self._file(record.task_id), json.dumps(fields))

    def get(self, task_id: str, now: float | None = None) -> TaskRecord | None:
        """The task, or ``None`` (no such task, or expired: its file is then removed)."""
        if not _TASK_ID.fullmatch(task_id):
            return None
        file = self._file(task_id)
        try:
            fields = json.loads(file.read_text(encoding="utf-8"))
            record = TaskRecord(**{**fields, "cell_ids": tuple(fields["cell_ids"])})
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if (time.time() if now is None else now) - record.created > self.ttl:
            file.unlink(missing_ok=True)
            return None
        return record

    def _file(self, task_id: str) -> Path:
        return self.folder / f"{task_id}.json"
