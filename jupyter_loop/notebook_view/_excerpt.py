"""Clean text for a model and cut it to a budget as head + tail (pure).

Offsets always count characters of the text given, before cleaning, so a tool can page
through an output the way it is kept; cleaning (ANSI escapes, ``\\r`` progress lines) is
applied to the excerpt only, after slicing, so a huge output is never cleaned or copied whole.
The text given has its secrets masked already (cells are masked as they are read,
:func:`~.snapshot.read_cell`): a cut through an unmasked secret would leave pieces of it
that no masker recognises.

Example:
    >>> page = head_tail("".join(f"line {i}\\n" for i in range(100)), 100)
    >>> print(page.text)
    line 0
    line 1
    line 2
    … [753 characters omitted; read more with offset=21] …
    line 98
    line 99
    <BLANKLINE>
    >>> page.next_offset, page.truncated
    (21, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..execution.outputs.terminal import ANSI_ESCAPE, strip_ansi

_SNAP = 4  # look this fraction of a piece back (or ahead) for a line break to cut at
_MIN_PIECE = 16


@dataclass(frozen=True)
class Excerpt:
    """Part of a text that fits a budget.

    Attributes:
        text: What to show: the whole text, or head + omission marker + tail (or one page).
        total_chars: Length of the raw text.
        next_offset: Where to continue reading (``None`` when nothing after the head is left).
        truncated: Whether anything was left out.
    """

    text: str
    total_chars: int
    next_offset: int | None = None
    truncated: bool = False


def collapse_carriage_returns(text: str) -> str:
    """Apply ``\\r`` like a terminal: each line keeps what was written over it last.

    Example:
        >>> collapse_carriage_returns("10%\\r50%\\r100%\\ndone\\r\\n")
        '100%\\ndone\\n'
    """
    if "\r" not in text:
        return text
    lines = text.replace("\r\n", "\n").split("\n")
    for index, line in enumerate(lines):
        if "\r" in line:
            screen = ""
            for part in line.split("\r"):
                screen = part + screen[len(part) :]
            lines[index] = screen
    return "\n".join(lines)


def clean_text(text: str) -> str:
    """:func:`strip_ansi` then :func:`collapse_carriage_returns`.

    Example:
        >>> clean_text("\\x1b[32m 1/3\\r 3/3\\x1b[0m\\n")
        ' 3/3\\n'
    """
    return collapse_carriage_returns(strip_ansi(text))


def head_tail(text: str, budget_chars: int, offset: int = 0, *, clean: bool = False) -> Excerpt:
    """Cut ``text`` to about ``budget_chars`` characters (marker included).

    At ``offset`` 0, a text over budget becomes its head, a marker naming how many characters
    were omitted and the offset to read on from, and its tail; cuts snap to line breaks when
    one is near. At a later ``offset``, the excerpt is the page starting there, with a marker
    to the next page. ``clean`` cleans the pieces (never the whole text).

    Example:
        >>> head_tail("abcdefghij" * 10, 30, offset=90)
        Excerpt(text='abcdefghij', total_chars=100, next_offset=None, truncated=True)
    """
    total = len(text)
    tidy = clean_text if clean else _same
    offset = max(0, min(offset, total))
    budget = max(0, budget_chars)
    if offset > 0:
        return _page(text, budget, offset, tidy)
    if total <= budget:
        return Excerpt(tidy(text), total)
    marker_room = len(_marker(total, total)) + 2
    room = budget - marker_room
    if room < 2 * _MIN_PIECE:
        head_end = _safe_cut(text, _snap_back(text, 0, budget))
        return Excerpt(tidy(text[:head_end]), total, head_end, True)
    head_end = _safe_cut(text, _snap_back(text, 0, (room + 1) // 2))
    tail_start = _safe_cut(text, _snap_ahead(text, total - room // 2, total))
    head = tidy(text[:head_end])
    tail = tidy(text[tail_start:])
    body = f"{head}{_sep(head)}{_marker(tail_start - head_end, head_end)}\n{tail}"
    return Excerpt(body, total, head_end, True)


def share_budget(sizes: list[int], budget: int) -> list[int]:
    """Shares of ``budget``: items smaller than an equal share get their size, the larger ones
    split what remains equally.

    Example:
        >>> share_budget([10, 500, 1000], 300)
        [10, 145, 145]
    """
    shares = [0] * len(sizes)
    remaining = max(0, budget)
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for done, index in enumerate(order):
        share = min(sizes[index], remaining // (len(order) - done))
        shares[index] = share
        remaining -= share
    return shares


def _page(text: str, budget: int, offset: int, tidy: Callable[[str], str]) -> Excerpt:
    total = len(text)
    if total - offset <= budget:
        return Excerpt(tidy(text[offset:]), total, None, True)
    room = max(_MIN_PIECE, budget - len(_more(total, total)) - 1)
    end = _safe_cut(text, _snap_back(text, offset, offset + room))
    page = tidy(text[offset:end])
    return Excerpt(f"{page}{_sep(page)}{_more(total - end, end)}", total, end, True)


def _same(text: str) -> str:
    return text


def _marker(omitted: int, offset: int) -> str:
    return f"… [{omitted} characters omitted; read more with offset={offset}] …"


def _more(left: int, offset: int) -> str:
    return f"… [{left} more characters; read more with offset={offset}]"


def _sep(piece: str) -> str:
    return "" if not piece or piece.endswith("\n") else "\n"


def _snap_back(text: str, start: int, end: int) -> int:
    """``end``, moved back to just after a line break if one is in the last quarter."""
    end = min(end, len(text))
    floor = end - (end - start) // _SNAP
    newline = text.rfind("\n", floor, end)
    return newline + 1 if newline >= 0 and newline + 1 > start else end


def _snap_ahead(text: str, start: int, end: int) -> int:
    """``start``, moved ahead to just after a line break if one is in the first quarter."""
    newline = text.find("\n", start, start + (end - start) // _SNAP)
    return newline + 1 if newline >= 0 else start


def _safe_cut(text: str, position: int) -> int:
    """``position``, moved back to the start of an escape sequence it would split."""
    window_start = max(0, position - 32)
    escape = text.rfind("\x1b", window_start, position)
    if escape < 0:
        return position
    found = ANSI_ESCAPE.match(text, escape)
    return escape if found is None or found.end() > position else position
