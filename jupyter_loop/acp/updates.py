"""What an ACP agent says during a turn (``session/update``), written into the notebook's
live conversation and its durable store, in the order it was said.

Message chunks stream into one assistant entry (in batches, as the built-in assistant's
text does); a tool call, a plan or anything else shown between two pieces of text closes
the text before it, so the next text starts a new entry below. A tool call is shown once,
when it ends (completed or failed): the live entries are appended, never changed; a
``diff`` it carries is shown as a unified diff of its path. Thoughts are gathered into one
``thought`` entry, written when the agent goes on to something else (the panel shows it
collapsed). The plan is a notice with each entry's status (✓ done, → under way, •
pending); the agent's slash commands (``available_commands_update``) a notice naming them.

Everything is masked with the live turn's masker, as the built-in assistant's is: the
chunks through :class:`~jupyter_loop.agent.shared_turn.StreamedText` (a secret split
across chunks included), a tool call's title and content, a thought, a diff and a notice
masked whole before they are cut, so the tabs and the stored conversation hold the same
masked text.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Callable
from typing import Any

from ..agent.callers import capped
from ..agent.shared_turn import LiveTurn, StreamedText
from ..secrets import SecretMasker

StoreMessage = Callable[..., None]
"""``store(role, text, tool=None, level=None)``: one message of the durable conversation."""


def _text_of(content: Any) -> str:
    """The text of a content block (other kinds are named, not shown)."""
    kind = getattr(content, "type", "")
    if kind == "text":
        return str(getattr(content, "text", ""))
    if kind == "resource_link":
        return f"[{getattr(content, 'name', '') or getattr(content, 'uri', '')}]"
    return f"[{kind or 'content'}]"


def _tool_detail(update: Any, masker: SecretMasker | None) -> str | None:
    """The text of a tool call's content (diffs named by their path), masked, then capped."""
    parts = []
    for item in getattr(update, "content", None) or []:
        kind = getattr(item, "type", "")
        if kind == "content":
            parts.append(_text_of(getattr(item, "content", None)))
        elif kind == "diff":
            parts.append(_diff(item))
        elif kind == "terminal":
            parts.append("terminal output")
    if not parts:
        return None
    text = "\n".join(p for p in parts if p)
    return capped(masker.mask(text) if masker is not None else text, 2000)


def _diff(item: Any) -> str:
    """An ACP ``diff`` content as a unified diff of its path (a new file: all added)."""
    path = str(getattr(item, "path", ""))
    old = str(getattr(item, "old_text", None) or "").splitlines()
    new = str(getattr(item, "new_text", None) or "").splitlines()
    lines = difflib.unified_diff(old, new, path, path, lineterm="")
    return "\n".join(lines) or f"{path}: unchanged"


def commands_text(commands: Any) -> str:
    """The agent's slash commands, as one line."""
    named = []
    for command in commands or []:
        description = str(getattr(command, "description", "") or "")
        named.append(f"/{command.name}" + (f" ({capped(description, 80)})" if description else ""))
    return "Commands: " + ", ".join(named)


PLAN_MARKS = {"completed": "✓", "in_progress": "→"}


class TurnUpdates:
    """Writes one turn's ``session/update`` notifications (see the module docstring)."""

    def __init__(self, live: LiveTurn, interval: float, store: StoreMessage) -> None:
        self._live = live
        self._masker = live.masker
        self._interval = interval
        self._store = store
        self._stream: StreamedText | None = None
        self._thought: list[str] = []
        self._tools: dict[str, dict[str, Any]] = {}
        self.thoughts = 0
        self.said: list[str] = []
        """Everything the agent wrote, one item per assistant entry."""
        # The SDK handles each notification in a task of its own: written one at a time,
        # in the order they came (a lock's waiters are served in order).
        self._lock = asyncio.Lock()

    async def _close_thought(self) -> None:
        # Masked whole, once: the tabs and the stored conversation get the same text.
        text, self._thought = self._mask("".join(self._thought)), []
        if text.strip():
            await self._live.add("thought", text=text)
            self._store("thought", text)

    async def _close_text(self) -> None:
        await self._close_thought()
        await self._close_stream()

    async def _close_stream(self) -> None:
        if self._stream is None:
            return
        stream, self._stream = self._stream, None
        text = await stream.close()
        if text:
            self.said.append(text)
            self._store("assistant", text)

    async def apply(self, update: Any) -> None:
        async with self._lock:
            await self._apply(update)

    async def _apply(self, update: Any) -> None:
        kind = getattr(update, "session_update", "")
        if kind == "agent_thought_chunk":
            self.thoughts += 1
            await self._close_stream()  # the thought comes after the text before it
            self._thought.append(_text_of(update.content))
            return
        await self._close_thought()
        if kind == "agent_message_chunk":
            text = _text_of(update.content)
            if self._stream is None:
                self._stream = StreamedText(self._live, self._interval)
            self._stream.add(text)
        elif kind in ("tool_call", "tool_call_update"):
            await self._tool(update)
        elif kind == "plan":
            steps = [f"{PLAN_MARKS.get(e.status, '•')} {e.content}" for e in update.entries]
            await self._notice("Plan:\n" + "\n".join(steps))
        elif kind == "available_commands_update":
            await self._notice(commands_text(update.available_commands))

    def _mask(self, text: str) -> str:
        return self._masker.mask(text) if self._masker is not None else text

    async def _tool(self, update: Any) -> None:
        known = self._tools.setdefault(update.tool_call_id, {"title": "", "detail": None})
        if getattr(update, "title", None):
            known["title"] = update.title
        meta = getattr(update, "field_meta", None) or {}
        if isinstance(meta.get("toolName"), str) and not known.get("name"):
            known["name"] = meta["toolName"]  # Qwen Code's (and Gemini CLI's) tool name
        detail = _tool_detail(update, self._masker)
        if detail:
            known["detail"] = detail
        status = getattr(update, "status", None)
        if status not in ("completed", "failed") or known.get("shown"):
            return
        known["shown"] = True
        await self._close_text()
        title = capped(self._mask(known["title"] or "a tool call"), 200)
        ok = status == "completed"
        await self._live.add("tool", name=title, summary=title, detail=known["detail"], ok=ok)
        self._store("tool", title, tool={"name": title, "ok": ok})

    async def notice(self, text: str, level: str = "info") -> None:
        async with self._lock:
            await self._notice(text, level)

    async def _notice(self, text: str, level: str = "info") -> None:
        await self._close_text()
        text = self._mask(text)
        await self._live.add("notice", text=text, level=level)
        self._store("notice", text, level=level)

    async def close(self) -> str:
        """Write the last text; returns everything the agent wrote in the turn."""
        async with self._lock:
            await self._close_text()
        return "\n\n".join(self.said)
