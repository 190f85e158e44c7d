"""The notebook parts of the prompt: the turn's overview and the live view (pure).

The overview is made once, at a turn's first step, and sent unchanged after (the stable
prefix): the map with the head and tail of each cell's printed output, and in full the cells
pointed at, those with errors and those run most recently. The live view closes every
request: cells changed since the overview, the cells the tools touched as they are now, and
working memory.

Example:
    >>> cells = [CellSnapshot("c1", "code", "print(2)", 1, outputs=(
    ...     {"output_type": "stream", "name": "stdout", "text": "2\\n"},))]
    >>> overview = make_overview(cells, [], room_tokens=300, min_map_tokens=100,
    ...                          detail_chars=400, wrap=lambda text: text, images=False)
    >>> print(overview.text)
    Notebook when the user asked
    <BLANKLINE>
    ## Notebook map
    1 cells (number id type [count] first line → outputs)
    1 c1 code [1] print(2) → stdout 1 line
        | 2
    <BLANKLINE>
    ## Cells in full (active, in focus, run most recently, with errors)
    cell 1 c1 code [1]
    source:
    print(2)
    outputs:
    [0] stdout
    2
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jupyter_loop.notebook_view.notebook_map import (
    CellSnapshot,
    cell_line,
    estimate_tokens,
    notebook_map,
    omitted_cells,
)
from jupyter_loop.notebook_view.summary import (
    ImageAttachment,
    head_tail,
    share_budget,
    summarize_outputs,
)

MIN_FOCUS_CHARS = 600
MAX_DETAIL_CELLS = 6
RECENT_RUNS = 2
"""Cells run most recently (highest execution counts) shown in full in the overview."""
ERROR_CELLS = 2


@dataclass(frozen=True)
class TurnOverview:
    """The notebook as the turn began, sent unchanged at every step of the turn.

    Attributes:
        text: The message (unmasked; masking is applied to every message sent).
        cells: The cells it was made from (the live view lists what changed since).
        images: Images of its cells shown in full (only when the model takes images).
        cut: What it left out.
    """

    text: str
    cells: tuple[CellSnapshot, ...]
    images: tuple[ImageAttachment, ...] = ()
    cut: tuple[str, ...] = ()


def make_overview(
    cells: Sequence[CellSnapshot],
    detail_ids: Sequence[str],
    *,
    room_tokens: int,
    min_map_tokens: int,
    detail_chars: int,
    wrap: Callable[[str], str],
    images: bool,
) -> TurnOverview:
    """The notebook as the turn began: in full (within ``detail_chars``) the cells pointed
    at, those with errors and those run most recently; and the map with printed-output
    excerpts, in what they leave of ``room_tokens`` (at least ``min_map_tokens``)."""
    cut: list[str] = []
    wanted = _detail_ids(cells, detail_ids)
    detail, attached, detail_cut = cells_in_full(cells, wanted, detail_chars, images)
    cut.extend(detail_cut)
    map_tokens = max(min_map_tokens, room_tokens - estimate_tokens(detail) - 60)
    map_text = notebook_map(cells, map_tokens, focus_ids=wanted, excerpts=True)
    omitted = omitted_cells(map_text)
    if omitted:
        cut.append(f"map: {omitted} of {len(cells)} cells omitted")
    sections = ["Notebook when the user asked", f"## Notebook map\n{wrap(map_text)}"]
    if detail:
        title = "## Cells in full (active, in focus, run most recently, with errors)"
        sections.append(f"{title}\n{wrap(detail)}")
    return TurnOverview("\n\n".join(sections), tuple(cells), tuple(attached), tuple(cut))


def _detail_ids(cells: Sequence[CellSnapshot], pointed: Sequence[str]) -> list[str]:
    """The cells the overview shows in full: pointed at, run most recently, with errors."""
    ran = sorted(
        (cell for cell in cells if cell.execution_count is not None),
        key=lambda cell: cell.execution_count or 0,
    )
    failed = [cell for cell in cells if _has_error(cell)]
    recent = [cell.id for cell in ran[-RECENT_RUNS:][::-1]]
    errors = [cell.id for cell in failed[-ERROR_CELLS:]]
    return list(dict.fromkeys([*pointed, *errors, *recent]))[:MAX_DETAIL_CELLS]


def _has_error(cell: CellSnapshot) -> bool:
    return any(output.get("output_type") == "error" for output in cell.outputs)


@dataclass(frozen=True)
class LiveShares:
    """Characters for each part of the live view."""

    changes: int
    focus: int
    memory: int


def live_view(
    cells: Sequence[CellSnapshot],
    overview: TurnOverview,
    focus_ids: Sequence[str],
    memory: Sequence[str],
    *,
    dropped_steps: int,
    shares: LiveShares,
    wrap: Callable[[str], str],
    cut: list[str],
    images: bool,
) -> tuple[str, list[ImageAttachment]]:
    """The last message of every request: what changed since the overview, the cells the
    tools touched as they are now, working memory (and how many steps were dropped)."""
    sections: list[str] = []
    changes = _changes(overview.cells, cells, shares.changes)
    if changes:
        sections.append(f"## Changed since the user asked\n{wrap(changes)}")
    focus_text, attached, focus_cut = cells_in_full(cells, focus_ids, shares.focus, images)
    cut.extend(focus_cut)
    if focus_text:
        sections.append(f"## Cells you used, as they are now\n{wrap(focus_text)}")
    if memory:
        notes = _memory(memory, shares.memory, cut)
        sections.append(f"## Working memory\n{wrap(notes)}")
    if dropped_steps:
        sections.append(f"[{dropped_steps} earlier tool steps of this turn omitted]")
    if not sections:
        return "Notebook now: unchanged since the user asked.", attached
    return "Notebook now (rebuilt at every step)\n\n" + "\n\n".join(sections), attached


def _changes(before: Sequence[CellSnapshot], now: Sequence[CellSnapshot], budget_chars: int) -> str:
    """One map line per cell that is new or changed since ``before``, and what is gone."""
    old = {cell.id: cell for cell in before}
    lines: list[str] = []
    for index, cell in enumerate(now):
        previous = old.pop(cell.id, None)
        if previous is None or previous is cell or previous == cell:
            if previous is None:
                lines.append("new: " + cell_line(cell, index))
            continue
        lines.append(cell_line(cell, index))
    if old:
        lines.append(f"deleted: {', '.join(old)}")
    kept = newest_within(lines[::-1], budget_chars)[::-1]
    if len(kept) < len(lines):
        kept.append(f"[{len(lines) - len(kept)} more changed cells: see the map tool]")
    return "\n".join(kept)


def cells_in_full(
    cells: Sequence[CellSnapshot], ids: Sequence[str], budget_chars: int, images: bool
) -> tuple[str, list[ImageAttachment], list[str]]:
    """Source and summarised outputs of the cells in ``ids`` sharing ``budget_chars``; the
    images of their outputs (when ``images``); what was cut."""
    index = {cell.id: position for position, cell in enumerate(cells)}
    cut: list[str] = []
    wanted = list(dict.fromkeys(ids))
    missing = [cell_id for cell_id in wanted if cell_id not in index]
    found = [cell_id for cell_id in wanted if cell_id in index]
    fits = max(1, budget_chars // MIN_FOCUS_CHARS)
    if len(found) > fits:
        cut.append(f"focus: {len(found) - fits} of {len(found)} cells not shown in full")
        found = found[:fits]
    room = budget_chars - 2 * len(found)
    # Each cell is first summarised with the whole budget (cheap: bounded by it), then the
    # cells that do not fit their share are summarised again within it.
    full = [_one_focus_cell(cells[index[i]], index[i], room, images) for i in found]
    shares = share_budget([len(text) for text, _, _ in full], room)
    parts: list[str] = []
    attached: list[ImageAttachment] = []
    for cell_id, first, share in zip(found, full, shares, strict=True):
        position = index[cell_id]
        text, cell_images, truncated = first
        if len(text) > share:
            text, cell_images, truncated = _one_focus_cell(cells[position], position, share, images)
        parts.append(text)
        attached.extend(cell_images)
        if truncated:
            cut.append(f"focus: cell {cell_id} shortened")
    parts.extend(f"cell {cell_id}: no such cell" for cell_id in missing)
    return "\n\n".join(parts), attached, cut


def _one_focus_cell(
    cell: CellSnapshot, position: int, share: int, images: bool
) -> tuple[str, tuple[ImageAttachment, ...], bool]:
    header = "cell " + cell_line(cell, position, with_source=False, with_outputs=False)
    source_share = share // 2 if cell.outputs else share - len(header) - 20
    source = head_tail(cell.source, max(0, source_share))
    if not cell.outputs:
        return f"{header}\nsource:\n{source.text}\noutputs: none", (), source.truncated
    rest = share - len(header) - len(source.text) - 20
    summary = summarize_outputs(cell.outputs, max(0, rest), model_takes_images=images)
    text = f"{header}\nsource:\n{source.text}\noutputs:\n{summary.text}"
    return text, summary.images, source.truncated or summary.truncated


def newest_within(lines: list[str], budget_chars: int) -> list[str]:
    """The last lines that fit in ``budget_chars`` (newlines counted), in order."""
    kept: list[str] = []
    for line in reversed(lines):
        budget_chars -= len(line) + 1
        if budget_chars < 0:
            break
        kept.append(line)
    return kept[::-1]


def _memory(notes: Sequence[str], budget_chars: int, cut: list[str]) -> str:
    kept: list[str] = []
    budget = budget_chars
    for note in reversed(notes):
        line = "- " + one_line(note, max(40, budget_chars // 4))
        if budget - len(line) - 1 < 0:
            break
        kept.append(line)
        budget -= len(line) + 1
    if len(kept) < len(notes):
        cut.append(f"memory: {len(notes) - len(kept)} older notes omitted")
    return "\n".join(kept[::-1])


def one_line(text: str, limit: int) -> str:
    line = " ".join(text[: limit * 2].split())
    return line if len(line) <= limit and len(text) <= limit * 2 else line[: limit - 1] + "…"
