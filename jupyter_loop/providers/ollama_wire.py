"""Pure translation between our values and Ollama's native ``/api/chat`` format.

Ollama differs from OpenAI: tool-call arguments are objects, tool calls have no ids, and a
tool result names its tool (``tool_name``) instead of a call id.

Example:
    >>> calls_from_ollama([{"function": {"name": "run", "arguments": {"ids": ["c1"]}}}])
    (ToolCall(id='call_0', name='run', arguments_json='{"ids": ["c1"]}'),)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .base import ChatMessage, ToolCall


def to_ollama_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Messages for ``/api/chat``: object arguments, ``tool_name`` on tool results."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        entry: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.images:
            entry["images"] = [image.data for image in message.images]
        if message.tool_calls:
            entry["tool_calls"] = [
                {"function": {"name": call.name, "arguments": _arguments_object(call)}}
                for call in message.tool_calls
            ]
        if message.role == "tool" and message.tool_name:
            entry["tool_name"] = message.tool_name
        wire.append(entry)
    return wire


def _arguments_object(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as an object; text that is not one is passed on, wrapped."""
    try:
        value = json.loads(call.arguments_json or "{}")
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"raw_arguments": call.arguments_json}


def calls_from_ollama(calls: Iterable[Any], start: int = 0) -> tuple[ToolCall, ...]:
    """Tool calls from Ollama (dicts or the client's models) with ids ``call_<n>``.

    Ids count from ``start`` within one step, so they are stable for the same answer.
    """
    result = []
    for number, call in enumerate(calls, start=start):
        function = call["function"]
        arguments = function["arguments"]
        if isinstance(arguments, Mapping):
            text = json.dumps(dict(arguments), ensure_ascii=False)
        else:
            text = str(arguments)
        result.append(ToolCall(id=f"call_{number}", name=function["name"], arguments_json=text))
    return tuple(result)
