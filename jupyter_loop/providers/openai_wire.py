"""Pure translation between our values and the OpenAI chat-completions wire format.

No I/O here: messages and tools out, streamed tool-call pieces in.

Example:
    >>> calls = ToolCallAssembler()
    >>> calls.add(index=0, call_id="call_a", name="read_cell", arguments='{"cell_')
    >>> calls.add(index=0, call_id=None, name=None, arguments='id": "c1"}')
    >>> calls.result()
    (ToolCall(id='call_a', name='read_cell', arguments_json='{"cell_id": "c1"}'),)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import ChatMessage, ImagePart, ToolCall


def to_openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Messages in the chat-completions format.

    Tool messages cannot carry images in this format, so images attached to a tool result
    follow it as a user message.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            wire.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id or "",
                    "content": message.content,
                }
            )
            if message.images:
                label = f"Images from the result of {message.tool_name or 'the tool'}:"
                wire.append({"role": "user", "content": _parts(label, message.images)})
        elif message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                entry["tool_calls"] = [_tool_call(call) for call in message.tool_calls]
            wire.append(entry)
        elif message.images:
            wire.append({"role": message.role, "content": _parts(message.content, message.images)})
        else:
            wire.append({"role": message.role, "content": message.content})
    return wire


def _tool_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments_json},
    }


def _parts(text: str, images: Sequence[ImagePart]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts.extend({"type": "image_url", "image_url": {"url": image.data_url()}} for image in images)
    return parts


@dataclass
class _Pending:
    call_id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Joins tool calls streamed in pieces: id and name first, arguments spread over chunks.

    Pieces are matched by ``index`` (parallel calls stream side by side). A piece with
    no index continues the last call; a piece whose new id differs from its index's
    started call (some servers send every call at index 0) starts a new call.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _Pending] = {}
        self._slots: dict[int, int] = {}
        self._last: int | None = None

    def add(
        self, *, index: int | None, call_id: str | None, name: str | None, arguments: str | None
    ) -> None:
        """Record one streamed piece of a tool call."""
        slot = self._slot(index, call_id)
        pending = self._calls.setdefault(slot, _Pending())
        if call_id and not pending.call_id:
            pending.call_id = call_id
        if name and not pending.name:
            pending.name = name
        if arguments:
            pending.arguments.append(arguments)
        self._last = slot

    def _slot(self, index: int | None, call_id: str | None) -> int:
        if index is None:
            if self._last is not None and not call_id:
                return self._last
            return len(self._calls)
        slot = self._slots.get(index)
        if slot is not None:
            current = self._calls[slot].call_id
            if call_id and current and call_id != current:
                slot = len(self._calls)
                self._slots[index] = slot
            return slot
        slot = len(self._calls)
        self._slots[index] = slot
        return slot

    def result(self) -> tuple[ToolCall, ...]:
        """The calls assembled so far, in the order they started."""
        return tuple(
            ToolCall(
                id=pending.call_id or f"call_{slot}",
                name=pending.name,
                arguments_json="".join(pending.arguments),
            )
            for slot, pending in sorted(self._calls.items())
        )

    def __bool__(self) -> bool:
        return bool(self._calls)
