"""A model that repeats itself: the same call with the same arguments is refused, then ends
the turn.

Example:
    >>> guard = RepeatGuard()
    >>> calls = [ToolCall("1", "read_cell", '{"cell_id": "c1"}'),
    ...          ToolCall("2", "read_cell", '{ "cell_id":"c1" }'),
    ...          ToolCall("3", "read_cell", '{"cell_id": "c2"}')]
    >>> [guard.count(call) for call in calls]
    [1, 2, 1]
    >>> not_run(calls[0], "Not run.").summary
    'read_cell repeated: not run'
"""

from __future__ import annotations

import json

from ..providers import ToolCall
from .tools import ToolOutcome, short_arguments

REPEATS_REFUSED = 2
"""The same call with the same arguments this many times in a row is not run again."""
REPEATS_ENDING = 3
"""... and this many times ends the turn."""
REPEATED = (
    "Not run again: you made the same call with the same arguments twice in a row; its result "
    "is in the tool message before. Use it, call something else, or answer. A third identical "
    "call ends the turn."
)


class RepeatGuard:
    """Counts the calls made again in a row, as one turn's calls come."""

    def __init__(self) -> None:
        self._last_call: tuple[str, str] | None = None
        self._repeats = 0

    def count(self, call: ToolCall) -> int:
        """How many times in a row this call (name and arguments) has now been made."""
        signature = (call.name, _canonical(call.arguments_json))
        self._repeats = self._repeats + 1 if signature == self._last_call else 1
        self._last_call = signature
        return self._repeats


def not_run(call: ToolCall, text: str) -> ToolOutcome:
    """The outcome of a call answered without running it."""
    arguments = short_arguments(call.arguments_json)
    return ToolOutcome(text, f"{call.name} repeated: not run", text, False, (), arguments)


def _canonical(arguments_json: str) -> str:
    """Arguments in one spelling (key order and spacing do not make a call different)."""
    try:
        return json.dumps(json.loads(arguments_json or "{}"), sort_keys=True)
    except ValueError:
        return arguments_json
