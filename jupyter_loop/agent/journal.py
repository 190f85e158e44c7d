"""The agent's audit journal: every action, per notebook, masked, append-only, listable.

Entries are ``{at, turn_id, action, by, details}``. Actions: ``user_message``,
``model_call`` (model, tokens in and out, duration), ``model_error``, ``tool_call`` (name,
arguments, receipt), ``proposal``, ``accept``, ``reject``, ``approval_requested``,
``approval`` (decision, by whom), ``cell_run`` (cells and how each ended), ``turn_end``,
``new_conversation`` (by whom, how many messages the closed conversation held);
``external_call`` (an MCP or terminal client's tool call: tool, ok, receipt);
``terminal_command``, ``terminal_exit``, ``terminal_kill`` (an ACP agent's commands on the
server: the command and its folder, its exit code).

Example:
    >>> import tempfile
    >>> from jupyter_loop.secrets import SecretMasker
    >>> journal = AgentJournal(tempfile.mkdtemp(), SecretMasker(["hunter2-hunter2"]))
    >>> _ = journal.record("f1", None, "user_message", "ada", text="pw hunter2-hunter2")
    >>> journal.entries("f1")[0]["details"]
    {'text': 'pw ••••••'}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..secrets import SecretMasker
from .store import JsonLines, now_iso


class AgentJournal:
    """Append-only journal files, one per notebook file id; every entry masked."""

    def __init__(self, root: str | Path, masker: SecretMasker | None) -> None:
        self._files = JsonLines(root)
        self._masker = masker

    def record(
        self, file_id: str, turn_id: str | None, action: str, by: str, **details: Any
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "at": now_iso(),
            "turn_id": turn_id,
            "action": action,
            "by": by,
            "details": details,
        }
        if self._masker is not None:
            entry = self._masker.mask_value(entry)
        self._files.append(file_id, entry)
        return entry

    def entries(self, file_id: str) -> list[dict[str, Any]]:
        return self._files.read(file_id)
