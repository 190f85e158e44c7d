"""The invariants checked after each chaos trial, over every view of the notebook.

Views: the ``.ipynb`` on disk, the room as a joining tab receives it read by pycrdt and
by Yjs, and the collaboration store's rows read by pycrdt and by Yjs. Each check says
what a user would see wrong; a known open defect is labelled so the summary can tell
it from a new one.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Array, Doc, Map

from ..agent.proposals import PROPOSALS_MAP
from ..document.update_holes import check_whole
from ..execution.cell_marks import NOTE_PREFIX
from ..execution.handover import SOURCE_CHANGED
from .chaos_world import Expected, ExpectedCell, printed_lines
from .yjs import YjsView, disagreements


@dataclass(frozen=True)
class Violation:
    phase: str
    view: str
    what: str
    known: str | None = None

    def __str__(self) -> str:
        label = f" [known {self.known}]" if self.known else ""
        return f"{self.phase}/{self.view}: {self.what}{label}"


@dataclass(frozen=True)
class CellSeen:
    cell_id: str
    source: str
    stdout: str
    other: tuple[str, ...]
    """Every output that is not stdout, as text (a cut-off note, an error)."""
    execution_state: str | None


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return "" if value is None else str(value)


def cells_seen(cells: list[Any]) -> list[CellSeen]:
    """Cells in the shape every view gives them (plain dicts: JSON, ``to_py``, Yjs)."""
    seen = []
    for cell in cells:
        stdout, other = "", []
        for output in cell.get("outputs") or []:
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                stdout += _text(output.get("text"))
            else:
                other.append(_text(output.get("text")) or str(output.get("ename") or output))
        seen.append(
            CellSeen(
                str(cell.get("id")),
                _text(cell.get("source")),
                stdout,
                tuple(other),
                cell.get("execution_state"),
            )
        )
    return seen


def check_cells(
    expected: Expected, cells: list[CellSeen], phase: str, view: str, *, exact: bool
) -> list[Violation]:
    """No cell lost or duplicated, sources as typed, outputs what the kernel printed."""
    found: list[Violation] = []

    def bad(what: str) -> None:
        found.append(Violation(phase, view, what))

    ids = [cell.cell_id for cell in cells]
    wanted = [cell.cell_id for cell in expected.cells]
    if ids != wanted:
        duplicated = sorted({i for i in ids if ids.count(i) > 1})
        lost = [i for i in wanted if i not in ids]
        bad(f"cells {ids} != {wanted} (lost {lost}, duplicated {duplicated})")
    for cell in cells:
        if cell.cell_id not in wanted:
            continue
        model = expected.cell(cell.cell_id)
        problem = source_problem(model, cell.source)
        if problem:
            bad(f"{cell.cell_id} source: {problem}")
        problem = output_problem(model, cell, exact=exact, cut=expected.cut or expected.out_of_band)
        if problem:
            bad(f"{cell.cell_id} outputs: {problem}")
        if cell.execution_state == "running":
            bad(f"{cell.cell_id} left [*] (execution_state running)")
    return found


def source_problem(model: ExpectedCell, source: str) -> str | None:
    if not source.startswith(model.code):
        return f"code is not the last typed or written one: {source[:120]!r} (want {model.tag})"
    rest = source[len(model.code) :]
    lines = rest.split("\n")[1:] if rest else []
    if rest and not rest.startswith("\n"):
        return f"text glued to the code: {rest[:80]!r}"
    typed = [line for lines_ in model.typed.values() for line in lines_]
    if sorted(lines) != sorted(typed):
        missing = list((Counter(typed) - Counter(lines)).elements())  # a line may repeat
        extra = sorted((Counter(lines) - Counter(typed)).elements())
        return f"typed lines missing {missing}, extra or repeated {extra}"
    for tab, own in model.typed.items():
        order = [line for line in lines if line.startswith(f"# {tab} ")]
        if order != own:
            return f"tab {tab}'s lines out of order: {order}"
    return None


def output_problem(model: ExpectedCell, cell: CellSeen, *, exact: bool, cut: bool) -> str | None:
    """``exact``: the cell's last run printed its current code's lines, whole, and nothing
    else shows. Otherwise the lines are those of one of the cell's codes: whole, or (after
    a restart or out-of-band write mid-run) a prefix, maybe followed by the server's note
    on how the run ended; or, for a cell an agent asked to run, only the note that it was
    not run because its source changed after the run was approved."""
    lines = cell.stdout.splitlines()
    notes = [note for note in cell.other if note.strip()]
    if exact:
        if lines != printed_lines(model.tag) or notes:
            return f"want {model.tag} 0..{len(printed_lines(model.tag)) - 1}, got {lines} {notes}"
        return None
    if model.stdout is not None:
        if lines != model.stdout or notes:
            return f"want {shorten_lines(model.stdout)} (the last run's), got {lines} {notes}"
        return None
    if not lines and not notes:
        return None
    if model.agent_asked and not lines and notes == [f"{NOTE_PREFIX}{SOURCE_CHANGED}\n"]:
        return None  # an agent's run of code a person then changed: not run, and said so
    for tag in model.tags:
        whole = printed_lines(tag)
        if lines == whole and not notes:
            return None
        if cut and lines == whole[: len(lines)] and all(is_note(note) for note in notes):
            return None
    return f"not what a run of {model.tags} printed: {lines} {notes}"


def shorten_lines(lines: list[str]) -> str:
    return f"{lines[0]}..{lines[-1]} ({len(lines)} lines)" if len(lines) > 2 else str(lines)


def is_note(text: str) -> bool:
    """The server's own word on a run it ended (cut off by a restart, stopped by SIGTERM)."""
    return text.startswith(NOTE_PREFIX)


def check_room(
    expected: Expected, notebook: YNotebook, yjs: YjsView, phase: str, *, exact: bool
) -> list[Violation]:
    """The room as a tab joining now gets it, read by pycrdt and by Yjs."""
    doc = notebook.ydoc
    found = check_cells(
        expected, cells_seen(doc.get("cells", type=Array).to_py() or []), phase, "room", exact=exact
    )
    for problem in disagreements(doc, yjs):
        found.append(Violation(phase, "room-yjs", problem))
    found += [Violation(phase, "room", problem) for problem in offer_problems(expected, doc)]
    board = doc.get("jupyter_loop:execution", type=Map).to_py() or {}
    for cell_id, marker in board.items():
        if isinstance(marker, dict) and marker.get("state") in ("queued", "running"):
            found.append(Violation(phase, "room", f"{cell_id} marker left {marker.get('state')}"))
    return found


def offer_problems(expected: Expected, doc: Any) -> list[str]:
    """Lines typed offline into a cell a checkout replaced are in a pending proposal on it."""
    proposals = doc.get(PROPOSALS_MAP, type=Map).to_py() or {}
    pending = [
        p for p in proposals.values() if isinstance(p, dict) and p.get("status") == "pending"
    ]
    problems = []
    for cell_id, lines in expected.offered.items():
        offered = [str(p.get("new_source") or "") for p in pending if p.get("cell_id") == cell_id]
        missing = [line for line in lines if not any(line in source for source in offered)]
        if missing:
            problems.append(f"{cell_id}: lines typed offline {missing} are in no proposal on it")
    return problems


def check_file(
    expected: Expected, saved: dict[str, Any] | None, room: YNotebook, phase: str, *, exact: bool
) -> list[Violation]:
    if saved is None:
        return [Violation(phase, "file", "the .ipynb is unreadable")]
    found = check_cells(expected, cells_seen(saved.get("cells") or []), phase, "file", exact=exact)
    on_disk = [(c.cell_id, c.source, c.stdout) for c in cells_seen(saved.get("cells") or [])]
    in_room = [
        (c.cell_id, c.source, c.stdout)
        for c in cells_seen(room.ydoc.get("cells", type=Array).to_py() or [])
    ]
    if on_disk != in_room:
        found.append(Violation(phase, "file-room", f"the .ipynb {on_disk} != the room {in_room}"))
    return found


def store_rows(db: Path, room_id: str) -> list[bytes]:
    """A room's rows in jupyter-collaboration's store, in the order a room loads them
    (pycrdt-store's: by timestamp).

    The store names a room's rows ``.{file_type}:{file_id}.y`` (``json:notebook:ID`` ->
    ``.notebook:ID.y``), as ``jupyter_server_ydoc`` does when it opens the room."""
    _, file_type, file_id = room_id.split(":", 2)
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
            rows = connection.execute(
                "SELECT yupdate FROM yupdates WHERE path = ? ORDER BY timestamp, rowid",
                (f".{file_type}:{file_id}.y",),
            ).fetchall()
    except sqlite3.Error:
        return []
    return [bytes(row[0]) for row in rows]


def check_store(
    expected: Expected, rows: list[bytes], yjs: YjsView, room: YNotebook, phase: str
) -> list[Violation]:
    """The store's rows (``yjs``: as Yjs reads them) must apply with nothing pending, and
    give the room's cells."""
    if not rows:
        return []
    doc: Doc = Doc()
    for row in rows:
        try:
            check_whole(row)
            doc.apply_update(row)
        except BaseException as e:  # pycrdt panics on some damaged updates
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return [Violation(phase, "store-unreadable", f"a stored row: {type(e).__name__}: {e}")]
    found = []
    for problem in disagreements(doc, yjs):
        found.append(Violation(phase, "store-yjs", problem))
    stored = [(c.cell_id, c.source) for c in cells_seen(doc.get("cells", type=Array).to_py() or [])]
    live = [
        (c.cell_id, c.source) for c in cells_seen(room.ydoc.get("cells", type=Array).to_py() or [])
    ]
    if stored != live:
        found.append(Violation(phase, "store-room", f"the store {stored} != the room {live}"))
    return found
