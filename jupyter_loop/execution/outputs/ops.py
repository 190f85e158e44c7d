"""Kernel IOPub messages as edits to a cell's outputs (pure, no I/O).

Example:
    >>> op = op_from_message({"header": {"msg_type": "stream"},
    ...                       "content": {"name": "stdout", "text": "hi\\n"}})
    >>> op
    AppendStream(name='stdout', text='hi\\n')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AppendStream:
    name: str
    text: str


@dataclass(frozen=True)
class AppendOutput:
    """A rich or error output; ``display_id`` lets later updates find it."""

    output: dict[str, Any]
    display_id: str | None = None


@dataclass(frozen=True)
class ClearOutputs:
    wait: bool = False


@dataclass(frozen=True)
class UpdateDisplay:
    """New data for every output created with ``display_id`` (in any cell)."""

    display_id: str
    data: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


OutputOp = AppendStream | AppendOutput | ClearOutputs | UpdateDisplay


def op_from_message(message: dict[str, Any]) -> OutputOp | None:
    """The output edit an IOPub message asks for, or ``None`` if it produces none."""
    kind = message["header"]["msg_type"]
    content = message.get("content", {})
    if kind == "stream":
        return AppendStream(name=str(content.get("name", "stdout")), text=str(content["text"]))
    if kind in ("display_data", "execute_result"):
        return AppendOutput(_rich_output(kind, content), _display_id(content))
    if kind == "error":
        return AppendOutput(
            {
                "output_type": "error",
                "ename": str(content.get("ename", "")),
                "evalue": str(content.get("evalue", "")),
                "traceback": [str(line) for line in content.get("traceback", [])],
            }
        )
    if kind == "clear_output":
        return ClearOutputs(wait=bool(content.get("wait", False)))
    if kind == "update_display_data":
        display_id = _display_id(content)
        if display_id is None:
            return None
        return UpdateDisplay(display_id, content.get("data", {}), content.get("metadata", {}))
    return None


def _rich_output(kind: str, content: dict[str, Any]) -> dict[str, Any]:
    output: dict[str, Any] = {
        "output_type": kind,
        "data": content.get("data", {}),
        "metadata": content.get("metadata", {}),
    }
    if kind == "execute_result":
        output["execution_count"] = content.get("execution_count")
    return output


def _display_id(content: dict[str, Any]) -> str | None:
    transient = content.get("transient") or {}
    display_id = transient.get("display_id")
    return str(display_id) if display_id else None
