"""The conversation as the model gets it: recent turns in full, older ones a line each (pure).

Earlier turns may quote the notebook, so they go inside the untrusted-data envelope (the
``wrap`` function) like the notebook itself; the user's message of this turn does not.

Example:
    >>> turns = [ConversationMessage("user", "What is x?", earlier=True),
    ...          ConversationMessage("assistant", "x = 1; " * 40, earlier=True),
    ...          ConversationMessage("user", "And y?")]
    >>> cut = []
    >>> said = conversation_messages(turns, 120, 1_000, cut, lambda text: f"[{text}]")
    >>> said[0].content.splitlines()[:2]
    ['Earlier conversation, one line a turn:', '[user: What is x?']
    >>> said[1]
    ConversationMessage(role='user', content='And y?', earlier=False)
    >>> cut
    ['conversation: 2 older turns summarised, 0 omitted']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jupyter_loop.notebook_view.summary import head_tail

from ._views import newest_within, one_line

OLDER_TURN_CHARS = 120


@dataclass(frozen=True)
class ConversationMessage:
    """One message of the conversation (``role`` is ``"user"`` or ``"assistant"``).

    ``earlier``: from an earlier turn; it may quote the notebook, so it goes to the model
    inside the untrusted-data envelope like the notebook itself.
    """

    role: str
    content: str
    earlier: bool = False


def conversation_messages(
    turns: Sequence[ConversationMessage],
    recent_chars: int,
    older_chars: int,
    cut: list[str],
    wrap: Callable[[str], str],
) -> list[ConversationMessage]:
    """The messages to send: recent turns within ``recent_chars`` (the newest always,
    shortened if needed), preceded by one message summing up the older ones within
    ``older_chars``. What was shortened or left out is noted in ``cut``."""
    recent, older = _split(turns, recent_chars, cut, wrap)
    if not older:
        return recent
    summary = "Earlier conversation, one line a turn:\n" + wrap(_older(older, older_chars, cut))
    return [ConversationMessage("user", summary), *recent]


def _split(
    turns: Sequence[ConversationMessage],
    budget_chars: int,
    cut: list[str],
    wrap: Callable[[str], str],
) -> tuple[list[ConversationMessage], list[ConversationMessage]]:
    """Recent turns that fit in full (the newest always, shortened if needed), and the rest."""
    recent: list[ConversationMessage] = []
    left = budget_chars
    start = len(turns)
    for position in range(len(turns) - 1, -1, -1):
        turn = turns[position]
        if len(turn.content) > left and recent:
            break
        excerpt = head_tail(turn.content, max(left, 200))
        if excerpt.truncated:
            cut.append(f"conversation: turn {position} shortened")
        text = wrap(excerpt.text) if turn.earlier else excerpt.text
        recent.append(ConversationMessage(turn.role, text))
        left -= len(excerpt.text)
        start = position
    recent.reverse()
    return recent, list(turns[:start])


def _older(turns: Sequence[ConversationMessage], budget_chars: int, cut: list[str]) -> str:
    lines = (f"{turn.role}: {one_line(turn.content, OLDER_TURN_CHARS)}" for turn in turns)
    kept = newest_within(list(lines), budget_chars)
    omitted = len(turns) - len(kept)
    cut.append(f"conversation: {len(kept)} older turns summarised, {omitted} omitted")
    note = [f"[{omitted} earlier turns omitted]"] if omitted else []
    return "\n".join(note + kept)
