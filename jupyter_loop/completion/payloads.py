"""The completion request as the browser sends it, checked at the edge.

Example:
    >>> request = CompletionRequest.from_json(
    ...     {"path": "nb.ipynb", "cell_id": "c1", "editor_id": "t:c1", "before": "df[", "after": ""}
    ... )
    >>> request.before, request.model, request.visible_cell_ids
    ('df[', None, ())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import BadRequest

MAX_CELL_CHARS = 100_000
"""A cell longer than this is cut (around the cursor) before it is sent anywhere."""
MAX_VISIBLE_CELLS = 200
"""Ids of cells in view accepted at most (a tall screen of one-line cells shows ~100)."""


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise BadRequest(f"'{key}' must be a string.")
    return value


def _name(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > 256:
        raise BadRequest(f"'{key}' must be a non-empty string of at most 256 characters.")
    return value


def _optional_name(data: dict[str, Any], key: str) -> str | None:
    return None if data.get(key) in (None, "") else _name(data, key)


def _names(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if (
        not isinstance(value, list)
        or len(value) > MAX_VISIBLE_CELLS
        or not all(isinstance(item, str) and 0 < len(item) <= 256 for item in value)
    ):
        raise BadRequest(
            f"'{key}' must be a list of at most {MAX_VISIBLE_CELLS} cell ids (non-empty strings)."
        )
    return tuple(value)


def _count(data: dict[str, Any], key: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"'{key}' must be a whole number, 0 or more.")
    return value


@dataclass(frozen=True)
class CompletionRequest:
    """Complete the text at the cursor of one cell's editor.

    Attributes:
        path: The notebook.
        cell_id: The cell being edited (its neighbours and their outputs come from the
            server's live notebook).
        editor_id: The editor asking; a new request from the same editor cancels the
            previous one.
        before: The cell's text before the cursor, as the editor has it (it may be a
            keystroke ahead of the shared document).
        after: The cell's text after the cursor.
        model: The model to use; None: the configured completion model.
        visible_cell_ids: The cells the editor's notebook shows on screen (empty: not
            known); their recent outputs join the neighbouring cells in the prompt.
        sequence: The editor's count of its requests (0: not counted). Each request
            travels on its own connection, so a keystroke's request can reach the server
            after the next keystroke's; the number says which is newer.
    """

    path: str
    cell_id: str
    editor_id: str
    before: str
    after: str
    model: str | None = None
    visible_cell_ids: tuple[str, ...] = ()
    sequence: int = 0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CompletionRequest:
        """Read a request; raises :class:`BadRequest` naming the offending field."""
        return cls(
            path=_name(data, "path"),
            cell_id=_name(data, "cell_id"),
            editor_id=_name(data, "editor_id"),
            before=_text(data, "before")[-MAX_CELL_CHARS:],
            after=_text(data, "after")[:MAX_CELL_CHARS],
            model=_optional_name(data, "model"),
            visible_cell_ids=_names(data, "visible_cell_ids"),
            sequence=_count(data, "sequence"),
        )
