"""A read tool's answer within a host's limit, with a cursor for the rest.

Hosts cut or refuse a tool result over their limit (Claude Code: 25,000 tokens), and a
result cut by the host loses its end without a word. So a read's text is paged here: at
most ``max_tokens`` (:func:`~jupyter_loop.notebook_view.notebook_map.estimate_tokens`,
on the safe side), cut at a line's end where one is near, and its last line says how to
read on: the same call with ``cursor``. The text paged is the tool's whole answer, which
is masked as it is made (mask before you cut): a secret is never split into pieces a
mask would miss. A cursor is an offset into that text, made again at each call: a
notebook that changed between two pages reads on from the same offset of the new text.

Example:
    >>> text = "a" * 35 + "\\n" + "b" * 30
    >>> first = page(text, "", max_tokens=10)
    >>> first.text.splitlines()[0] == "a" * 35, first.cursor
    (True, '36')
    >>> page(text, "36", max_tokens=10).text == "b" * 30
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..agent.tools import ToolError
from ..notebook_view.notebook_map import estimate_tokens

CURSOR = {
    "type": "string",
    "description": (
        "Read on from here: the cursor a cut answer ends with (answers over the host's "
        "limit come in pages)."
    ),
}
NEAR_END = 0.8
"""A cut moves back to a line's end found in the page's last fifth."""


def paged(content: list[Any], cursor: str, max_tokens: int) -> list[Any]:
    """A read tool's content with its text (the first item) paged; its images and links
    come with the first page only."""
    import mcp_types as types

    if not content or not isinstance(content[0], types.TextContent):
        return content
    found = page(content[0].text, cursor, max_tokens)
    first = types.TextContent(type="text", text=found.text)
    return [first, *content[1:]] if not cursor else [first]


@dataclass(frozen=True)
class Page:
    text: str
    cursor: str | None  # None: nothing more


def page(text: str, cursor: str, max_tokens: int) -> Page:
    """The part of ``text`` from ``cursor`` (``""``: the start) within ``max_tokens``,
    with a last line naming the next cursor when there is more."""
    start = _offset(cursor, len(text))
    rest = text[start:]
    if estimate_tokens(rest) <= max_tokens:
        return Page(rest, None)
    end = _fitting(rest, max_tokens)
    newline = rest.rfind("\n", int(end * NEAR_END), end)
    if newline > 0:
        end = newline + 1
    following = str(start + end)
    note = (
        f"\n(cut at {max_tokens:,} tokens, the host's limit: call again with "
        f'cursor="{following}" to read on)'
    )
    return Page(rest[:end].rstrip("\n") + note, following)


def _offset(cursor: str, length: int) -> int:
    if not cursor:
        return 0
    if not cursor.isdigit() or int(cursor) > length:
        raise ToolError("'cursor' must be one a previous answer of this tool ended with.")
    return int(cursor)


def _fitting(text: str, max_tokens: int) -> int:
    """The longest prefix of ``text`` within ``max_tokens`` (at least one character)."""
    low, high = 1, min(len(text), max_tokens * 4)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return low
