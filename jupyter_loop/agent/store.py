"""Durable conversations and journals, one JSON-lines file per notebook, keyed by file id.

Keyed by the notebook's file id (not its path), a conversation follows renames and moves;
kept apart from the YStore (which a room may discard on load), it survives server restarts.
Every record is appended as one line and flushed, so a crash loses at most the line being
written; a torn last line is skipped when reading.

Example:
    >>> import tempfile
    >>> store = ConversationStore(tempfile.mkdtemp())
    >>> _ = store.add_message("f1", turn_id="t1", role="user", text="hi", by="ada")
    >>> [m["text"] for m in ConversationStore(store.root).messages("f1")]
    ['hi']
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import BadRequest
from ..owner_only import open_private, private_dir

_FILE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
log = logging.getLogger(__name__)


def now_iso(timespec: str = "milliseconds") -> str:
    """The time now, as an ISO 8601 UTC string (what every record carries)."""
    return datetime.now(timezone.utc).isoformat(timespec=timespec).replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class JsonLines:
    """Append-only JSON-lines files in one directory, one per file id."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, file_id: str) -> Path:
        if not _FILE_ID.match(file_id):
            raise BadRequest(f"'{file_id}' is not a file id.")
        return self.root / f"{file_id}.jsonl"

    def append(self, file_id: str, record: dict[str, Any]) -> None:
        target = self.path(file_id)
        private_dir(target.parent)
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        with open_private(target, "a", encoding="utf-8") as stream:
            stream.write(line + "\n")
            stream.flush()

    def read(self, file_id: str) -> list[dict[str, Any]]:
        target = self.path(file_id)
        if not target.exists():
            return []
        records = []
        with target.open(encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except ValueError:
                    log.warning("jupyter-loop skipped a torn line %d of %s", number, target)
                    continue
                if isinstance(value, dict):
                    records.append(value)
        return records


class ConversationStore:
    """The messages of each notebook's conversation, and the state of its last turn.

    Messages are ``{id, turn_id, role, text, tool?, level?, created_at, by?}`` with ``role``
    one of ``user``, ``assistant``, ``tool``, ``notice``. Turn records replace each other:
    the last one for a turn id is its state.

    A new conversation is a ``conversation`` line: messages and turns are read from the
    last one on, and the lines before it stay in the file. Rejected: rewriting or truncating
    the file, which would break the one-flushed-line-per-record rule that makes a crash lose
    at most one line, and would throw away what people said to the model (the journal keeps
    only their side of it).
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._files = JsonLines(self.root)

    def add_message(
        self,
        file_id: str,
        *,
        turn_id: str,
        role: str,
        text: str,
        by: str | None = None,
        tool: dict[str, Any] | None = None,
        level: str | None = None,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": new_id("m"),
            "turn_id": turn_id,
            "role": role,
            "text": text,
            "created_at": now_iso(),
        }
        if by is not None:
            message["by"] = by
        if tool is not None:
            message["tool"] = tool
        if level is not None:
            message["level"] = level
        self._files.append(file_id, {"type": "message", **message})
        return message

    def save_turn(self, file_id: str, turn: dict[str, Any]) -> None:
        self._files.append(file_id, {"type": "turn", **turn})

    def start_conversation(self, file_id: str, by: str) -> dict[str, Any]:
        """Begin a new conversation: what :meth:`messages` and :meth:`turns` read from now."""
        started = {"id": new_id("c"), "started_at": now_iso(), "by": by}
        self._files.append(file_id, {"type": "conversation", **started})
        return started

    def conversation(self, file_id: str) -> dict[str, Any] | None:
        """The current conversation's start (None: the notebook never began a new one)."""
        starts = [r for r in self._files.read(file_id) if r.get("type") == "conversation"]
        return _without_type(starts[-1]) if starts else None

    def _current(self, file_id: str) -> list[dict[str, Any]]:
        """The records of the current conversation (after its ``conversation`` line)."""
        records = self._files.read(file_id)
        starts = [i for i, r in enumerate(records) if r.get("type") == "conversation"]
        return records[starts[-1] + 1 :] if starts else records

    def messages(self, file_id: str) -> list[dict[str, Any]]:
        """The current conversation's messages, oldest first."""
        return [_without_type(r) for r in self._current(file_id) if r.get("type") == "message"]

    def turns(self, file_id: str) -> list[dict[str, Any]]:
        """The current conversation's turns, each its last record, in the order they started."""
        latest: dict[str, dict[str, Any]] = {}
        for record in self._current(file_id):
            if record.get("type") == "turn":
                latest[str(record.get("id"))] = _without_type(record)
        return list(latest.values())

    def last_turn(self, file_id: str) -> dict[str, Any] | None:
        turns = self.turns(file_id)
        return turns[-1] if turns else None


def _without_type(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "type"}
