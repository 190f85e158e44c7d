"""The ``run_cells`` tool: cells asked for, approved, run, and what came out told back.

An approval is given for the sources a person saw. When a cell changes while they decide,
the run is refused (:class:`~jupyter_loop.errors.SourceChanged`) and what would run now is
asked again, at most :data:`MAX_APPROVALS` times. Rejected: running the new sources under
the old answer, which would run code nobody approved.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from jupyter_ydoc import YNotebook

from ...access.rights import Ability, rights_text
from ...document import CellNotFound, find_cell, source_hash
from ...errors import JupyterLoopError, SourceChanged
from ...execution.run import RunOutcome
from ...notebook_view.snapshot import read_cell
from ...notebook_view.summary import ImageAttachment, headline, summarize_outputs
from ...secrets import SecretMasker
from .args import ToolError
from .args import arg_str_list as _str_list
from .outcome import ToolOutcome

MAX_RUN_CELLS = 10
MAX_APPROVALS = 3
"""Times a run is asked for again when its cells change while the user decides."""
MAX_RESULT_IMAGES = 4
"""Images one result carries at most (``result_images``); the rest stay placeholders."""

Approve = Callable[[list[str], dict[str, str]], Awaitable[tuple[bool, str, str]]]
"""Asks for permission to run cells (ids, sources); returns (allowed, why not, the id of
the approval a person answered, or "")."""
Run = Callable[[list[str], dict[str, str], str], Awaitable[dict[str, RunOutcome]]]
"""Runs cells (ids, the hash of each source that may run, the approval that allowed it);
raises SourceChanged otherwise."""


class CellRunner:
    """Runs one turn's (or one client's) ``run_cells`` calls."""

    def __init__(
        self,
        notebook: Callable[[], Awaitable[YNotebook]],
        *,
        approve: Approve,
        run: Run | None,
        record: Callable[..., None],
        result_chars: int,
        masker: SecretMasker | None,
        result_images: bool,
    ) -> None:
        self._notebook = notebook
        self._approve = approve
        self._run = run
        self._record = record
        self._chars = result_chars
        self._masker = masker
        self._result_images = result_images

    async def run_cells(self, args: dict[str, Any]) -> ToolOutcome:
        run = self._run
        if run is None:  # said before asking an approval the user could not give
            raise ToolError(
                "The user may not run cells in this notebook (that needs "
                f"{rights_text(Ability.RUN)}); propose edits instead."
            )
        cell_ids = _str_list(args, "cell_ids")
        if len(cell_ids) > MAX_RUN_CELLS:
            raise ToolError(f"Run at most {MAX_RUN_CELLS} cells at a time.")
        sources, positions = await self._sources(cell_ids)
        where = _cells_label([positions[i] for i in cell_ids])
        for _ in range(MAX_APPROVALS):
            allowed, reason, approval = await self._approve(cell_ids, sources)
            if not allowed:
                return ToolOutcome(
                    f"Not run: {reason}", f"did not run {where}", reason, False, tuple(cell_ids)
                )
            approved = {cell_id: source_hash(source) for cell_id, source in sources.items()}
            try:
                outcomes = await run(cell_ids, approved, approval)
                break
            except SourceChanged:  # edited since approved: ask again for what would run
                sources, _ = await self._sources(cell_ids)
            except JupyterLoopError as e:
                raise ToolError(f"The cells could not be run: {e.message}") from None
        else:
            raise ToolError("The cells kept changing while waiting for approval; not run.")
        self._record(
            "cell_run",
            cell_ids=cell_ids,
            outcomes={i: outcome.status for i, outcome in outcomes.items()},
        )
        return await self._what_came_out(cell_ids, outcomes, where)

    async def _sources(self, cell_ids: list[str]) -> tuple[dict[str, str], dict[str, int]]:
        notebook = await self._notebook()
        sources: dict[str, str] = {}
        positions: dict[str, int] = {}
        for cell_id in cell_ids:
            index, ycell = find_cell(notebook, cell_id)
            if ycell.get("cell_type") != "code":
                raise ToolError(f"Cell '{cell_id}' is not a code cell; only code cells run.")
            sources[cell_id] = str(ycell.get("source", ""))
            positions[cell_id] = index
        return sources, positions

    async def _what_came_out(
        self, cell_ids: list[str], outcomes: dict[str, RunOutcome], where: str
    ) -> ToolOutcome:
        """Each cell's count, how its run ended and its outputs (masked, then summarised
        within an even share of the result)."""
        notebook = await self._notebook()
        parts: list[str] = []
        heads: list[str] = []
        images: list[ImageAttachment] = []
        share = self._chars // max(1, len(cell_ids)) - 80
        for cell_id in cell_ids:
            outcome = outcomes.get(cell_id, RunOutcome("ok"))
            try:
                cell = read_cell(find_cell(notebook, cell_id)[1], self._masker)
            except CellNotFound:
                parts.append(f"cell {cell_id}: deleted while it ran")
                continue
            head = headline(cell.outputs) if outcome.status == "error" else ""
            heads.append(head or outcome.status)
            count = f"[{cell.execution_count}]" if cell.execution_count is not None else "[ ]"
            summary = summarize_outputs(
                cell.outputs,
                max(200, share),
                model_takes_images=self._result_images,
                max_images=MAX_RESULT_IMAGES - len(images),
            )
            images.extend(summary.images)
            note = f" ({outcome.note})" if outcome.note else ""
            shown_outputs = summary.text or "(no output)"
            parts.append(
                f"cell {cell_id} {count} → {outcome.status}{note}\noutputs:\n{shown_outputs}"
            )
        shown = ", ".join(dict.fromkeys(heads))
        return ToolOutcome(
            "\n\n".join(parts), f"ran {where} → {shown}", "", True, tuple(cell_ids),
            images=tuple(images),
        )  # fmt: skip


def _cells_label(positions: list[int]) -> str:
    """Cells as people count them.

    Example:
        >>> _cells_label([0]), _cells_label([2, 4])
        ('cell 1', 'cells 3, 5')
    """
    numbers = [str(p + 1) for p in positions]
    return f"cell {numbers[0]}" if len(numbers) == 1 else f"cells {', '.join(numbers)}"
