"""The ACP sessions' ids, kept on disk so the next server process can ``session/load`` them.

A session lives in its agent's process, which ends with the server (or when idle). An
agent that advertises ``loadSession`` keeps its sessions itself and can reopen one by id,
so the server keeps, per notebook, agent and person, the id of the session it last
opened and the conversation it belonged to: a turn after a restart loads that session
(the agent remembers the earlier turns) rather than opening a new one, and only when the
conversation is still the same one (a person who started a new conversation wants an
agent that remembers nothing of the one put away).

The file (``acp_sessions.json`` in the data directory) is owner-only, like the tokens',
and holds no secret: an id is worth nothing without the agent's own files, and the
session's token is minted anew for each process. A damaged file is set aside
(:mod:`jupyter_loop.state_files`): the sessions then start anew, and say so.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..owner_only import replace_private
from ..state_files import DamagedFiles, expect, open_or_set_aside


@dataclass(frozen=True)
class KeptSession:
    """The session last opened for one notebook, agent and person."""

    file_id: str
    agent: str
    principal: str
    session_id: str
    conversation: str
    server: str
    """The id of the server process that opened it (a later one's: it restarted since)."""

    @property
    def key(self) -> str:
        return json.dumps([self.file_id, self.agent, self.principal])


class KeptSessions:
    """The kept session ids (see the module docstring)."""

    def __init__(self, path: Path, damaged: DamagedFiles | None = None) -> None:
        self._path = path
        self._damaged = damaged or DamagedFiles()
        self._lock = threading.Lock()

    def find(self, file_id: str, agent: str, principal: str) -> KeptSession | None:
        key = json.dumps([file_id, agent, principal])
        with self._lock:
            return self._read().get(key)

    def keep(self, kept: KeptSession) -> None:
        with self._lock:
            sessions = self._read()
            sessions[kept.key] = kept
            replace_private(self._path, json.dumps([asdict(s) for s in sessions.values()]))

    def _read(self) -> dict[str, KeptSession]:
        return open_or_set_aside(self._path, _load, self._damaged)


def _load(path: Path) -> dict[str, KeptSession]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    found: dict[str, KeptSession] = {}
    for item in expect(raw, list, "sessions"):
        kept = _parse(expect(item, dict, "session"))
        found[kept.key] = kept
    return found


def _parse(item: dict[str, Any]) -> KeptSession:
    names = ("file_id", "agent", "principal", "session_id", "conversation", "server")
    return KeptSession(*(expect(item.get(name), str, name) for name in names))
