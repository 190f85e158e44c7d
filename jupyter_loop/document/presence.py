"""Who is in a notebook now and which cell each has in hand, as their tabs say.

Each tab publishes the cell its person has active and the cells selected with it in the
notebook room's awareness (``records.FOCUS_FIELD``), beside the ``user`` field that
jupyter-collaboration's tabs publish. The server only reads it: the room's awareness is
what every tab already sees of the others, so an outside agent asking "which cell is
this?" gets what a person in another tab sees, no more. A tab stops being counted when it
leaves or its state goes stale (the protocol's 30 s without renewal).

Example:
    >>> states = {
    ...     7: {"user": {"display_name": "Ada"},
    ...         "jupyter_loop_focus": {"cell_id": "c2", "selected_cell_ids": ["c2"]}},
    ...     9: {"user": {"name": "bob"}},
    ... }
    >>> [(p.name, p.focus and p.focus.cell_id) for p in people_of(states)]
    [('Ada', 'c2'), ('bob', None)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..records import FOCUS_FIELD, CellFocus

MAX_PEOPLE = 50
"""People listed at most (a lecture's room can hold hundreds of tabs)."""


@dataclass(frozen=True)
class PersonFocus:
    """A person with the notebook open in a tab, and the cells in their hand there."""

    name: str
    focus: CellFocus | None


def person_name(state: dict[str, Any]) -> str:
    """The name a tab's ``user`` field shows to others (as JupyterLab's collaborators
    panel shows it)."""
    user = state.get("user")
    if isinstance(user, dict):
        for key in ("display_name", "name", "username"):
            value = user.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:80]
    return "someone"


def people_of(states: dict[int, dict[str, Any]]) -> tuple[PersonFocus, ...]:
    """The people behind the room's awareness states, tabs with a cell in hand first."""
    people = [
        PersonFocus(person_name(state), CellFocus.from_json(state.get(FOCUS_FIELD)))
        for _, state in sorted(states.items())
    ]
    people.sort(key=lambda p: p.focus is None or p.focus.cell_id is None)
    return tuple(people[:MAX_PEOPLE])
