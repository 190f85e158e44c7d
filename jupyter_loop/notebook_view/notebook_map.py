"""The notebook map: one line per cell, cut around the focus to fit a budget (pure).

Cells are numbered as the user sees them: from 1, in document order (the panel's tool lines
and proposal cards say "cell 3" for the same cell).

Example:
    >>> cells = [CellSnapshot(f"c{i}", "code", f"x = {i}", i + 1) for i in range(50)]
    >>> print(notebook_map(cells, 80, focus_ids=["c25"]))
    50 cells (number id type [count] first line → outputs)
    1 c0 code [1] x = 0
    ... cells 2-24 omitted (23) ...
    25 c24 code [25] x = 24
    26 c25 code [26] x = 25
    27 c26 code [27] x = 26
    ... cells 28-50 omitted (23) ...
    (omitted cells: read them with the map tool, from their number)
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from math import ceil
from typing import Any

from jupyter_loop.notebook_view.summary import clean_text, headline

FIRST_LINE_CHARS = 80
HEADLINE_CHARS = 100
_GAP_TOKENS = 9  # what one "... cells 3-9 omitted (7) ..." line costs, roughly
_GAP_COUNT = re.compile(r"^\.\.\. cells \d+-\d+ omitted \((\d+)\) \.\.\.$", re.MULTILINE)
PAGING_NOTE = "(omitted cells: read them with the map tool, from their number)"
EXCERPT_LINES = 2
"""Printed lines shown from the head and from the tail of a cell's output in the map."""
EXCERPT_LINE_CHARS = 100
_EXCERPT_READ = 4_000  # characters read from each end of a printed text, at most


@dataclass(frozen=True)
class CellSnapshot:
    """A cell as a model sees it.

    Attributes:
        id: The cell id (tools address cells by it).
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        source: The source text.
        execution_count: Last execution count (``None``: never run).
        state: ``"idle"``, ``"queued"`` or ``"running"``.
        outputs: nbformat v4 output dicts.
        stale: Why the outputs are stale ("edited since this output", "kernel restarted
            since this output"; "" if they are not or nothing tells), from the run history.
    """

    id: str
    cell_type: str
    source: str
    execution_count: int | None = None
    state: str = "idle"
    outputs: Sequence[dict[str, Any]] = ()
    stale: str = ""


def cell_line(
    cell: CellSnapshot, index: int, *, with_source: bool = True, with_outputs: bool = True
) -> str:
    """``3 <id> code [5] first line (+N lines) → output headline``; ``index`` counts from
    0 and is shown as the cell's number, from 1.

    Example:
        >>> cell_line(CellSnapshot("a", "code", "\\nimport os\\nos.getcwd()", None, "running"), 0)
        '1 a code [*] import os (+1 lines)'
    """
    parts = [str(index + 1), cell.id, cell.cell_type + _marker(cell)]
    if cell.stale and cell.outputs:
        parts.append(f"(stale: {cell.stale})")
    if with_source:
        parts.append(_first_line(cell.source))
    line = " ".join(parts)
    if with_outputs and cell.outputs:
        summary = headline(cell.outputs)
        if summary:
            cut = summary if len(summary) <= HEADLINE_CHARS else summary[: HEADLINE_CHARS - 1] + "…"
            line += f" → {cut}"
    return line


def notebook_map(
    cells: Sequence[CellSnapshot],
    budget_tokens: int,
    *,
    focus_ids: Collection[str] = (),
    excerpts: bool = False,
) -> str:
    """One line per cell; over budget, the lines near the focus cells, the ends, running
    cells and errors are kept, and each run of cut cells is one marked line.

    With ``excerpts``, a cell's printed output follows its line (:func:`printed_excerpt`).
    Cell lines are made only for the cells that are kept, so a long notebook costs little.
    """
    count = len(cells)
    header = f"{count} cells (number id type [count] first line → outputs)"
    if not count:
        return header
    budget = budget_tokens - estimate_tokens(header) - estimate_tokens(PAGING_NOTE)
    focus = _focus(cells, focus_ids)
    order = sorted(range(count), key=lambda i: (_priority(cells, i, focus), i))
    reserve = min(budget // 3, _GAP_TOKENS * (2 * len(focus_ids) + 2))
    kept: dict[int, str] = {}
    used = 0
    for index in order:
        line = cell_line(cells[index], index)
        if excerpts:
            line += "".join(f"\n    | {text}" for text in printed_excerpt(cells[index].outputs))
        cost = estimate_tokens(line) + 1
        if used + cost > budget - (reserve if len(kept) + 1 < count else 0):
            break
        kept[index] = line
        used += cost
    while True:
        text = _render(header, kept, count)
        if estimate_tokens(text) <= budget_tokens or not kept:
            return text
        kept.pop(next(reversed(kept)))


def _focus(cells: Sequence[CellSnapshot], focus_ids: Collection[str]) -> list[int]:
    wanted = set(focus_ids)
    return [i for i, cell in enumerate(cells) if cell.id in wanted] if wanted else []


def _priority(cells: Sequence[CellSnapshot], index: int, focus: list[int]) -> int:
    last = len(cells) - 1
    priority = min(index, last - index) + 1
    if focus:
        priority = min(priority, min(abs(index - f) for f in focus))
    cell = cells[index]
    if cell.state in ("running", "queued"):
        priority = min(priority, 1)
    elif any(output.get("output_type") == "error" for output in cell.outputs):
        priority = min(priority, 3)
    return priority


def _render(header: str, kept: dict[int, str], count: int) -> str:
    lines = [header]
    previous = -1
    for index in sorted(kept):
        if index > previous + 1:
            lines.append(_gap(previous + 1, index - 1))
        lines.append(kept[index])
        previous = index
    if previous < count - 1:
        lines.append(_gap(previous + 1, count - 1))
    if len(kept) < count:
        lines.append(PAGING_NOTE)
    return "\n".join(lines)


def omitted_cells(map_text: str) -> int:
    """How many cells a map left out (the sum of its gap lines).

    Example:
        >>> omitted_cells("0 a code [1] x\\n... cells 1-8 omitted (8) ...\\n9 b code [2] y")
        8
    """
    return sum(int(count) for count in _GAP_COUNT.findall(map_text))


def _gap(first: int, last: int) -> str:
    return f"... cells {first + 1}-{last + 1} omitted ({last - first + 1}) ..."


def printed_excerpt(outputs: Sequence[dict[str, Any]]) -> list[str]:
    """The head and tail lines of what a cell printed (streams and text results).

    Reads at most a few kilobytes of each end, however long the output.

    Example:
        >>> printed_excerpt([{"output_type": "stream", "name": "stdout",
        ...                   "text": "".join(f"loss {n}\\n" for n in range(10))}])
        ['loss 0', 'loss 1', '… 6 lines …', 'loss 8', 'loss 9']
    """
    texts = [text for text in map(_printed, outputs) if text]
    if not texts:
        return []
    total = sum(text.count("\n") for text in texts) + (not texts[-1].endswith("\n"))
    head, tail = _ends(texts)
    if total <= 2 * EXCERPT_LINES and len(head) < _EXCERPT_READ:
        shown = [line for line in clean_text(head).splitlines() if line.strip()]
    else:
        first = [line for line in clean_text(head).splitlines() if line.strip()]
        last = [line for line in clean_text(tail).splitlines() if line.strip()]
        hidden = max(0, total - 2 * EXCERPT_LINES)
        shown = [*first[:EXCERPT_LINES], f"… {hidden} lines …", *last[-EXCERPT_LINES:]]
    return [_cut(line.strip(), EXCERPT_LINE_CHARS) for line in shown]


def _ends(texts: list[str]) -> tuple[str, str]:
    """The first and the last :data:`_EXCERPT_READ` characters of the joined ``texts``."""
    head = ""
    for text in texts:
        head += text[: _EXCERPT_READ - len(head)]
        if len(head) >= _EXCERPT_READ:
            break
    tail = ""
    for text in reversed(texts):
        tail = text[-(_EXCERPT_READ - len(tail)) :] + tail
        if len(tail) >= _EXCERPT_READ:
            break
    return head, tail


def _printed(output: dict[str, Any]) -> str:
    if output.get("output_type") == "stream":
        value = output.get("text", "")
    elif output.get("output_type") == "execute_result":
        value = (output.get("data") or {}).get("text/plain", "")
    else:
        return ""
    return value if isinstance(value, str) else "".join(str(part) for part in value)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _marker(cell: CellSnapshot) -> str:
    if cell.cell_type != "code":
        return ""
    if cell.state == "running":
        return " [*]"
    if cell.state == "queued":
        return " [queued]"
    return f" [{cell.execution_count}]" if cell.execution_count is not None else " [ ]"


def _first_line(source: str) -> str:
    head = source[: FIRST_LINE_CHARS * 4]
    first = next((line.strip() for line in head.split("\n") if line.strip()), "")
    if not first:
        return "(empty)"
    if len(first) > FIRST_LINE_CHARS:
        first = first[: FIRST_LINE_CHARS - 1] + "…"
    more = source[:100_000].strip().count("\n")
    return f"{first} (+{more} lines)" if more else first


def estimate_tokens(text: str) -> int:
    """A tokenizer-free token estimate, on the safe side.

    A quarter token per character (English and code run 3.5–4.5 characters a token) plus half
    a token per extra UTF-8 byte, so accented letters cost about 0.75 and CJK characters 1.25.

    Example:
        >>> estimate_tokens("abcdefgh"), estimate_tokens("日本語"), estimate_tokens("")
        (2, 4, 0)
    """
    if text.isascii():
        return ceil(len(text) / 4)
    extra = len(text.encode("utf-8", "replace")) - len(text)
    return ceil((len(text) + 2 * extra) / 4)
