"""A cell's outputs as the document should hold them, and what it holds of them (pure).

:class:`CellOutputs` is the budget model (:mod:`.budget_model`) seen from the document:
what to write at each batch (:meth:`CellOutputs.plan`, worked out by :mod:`.sync`),
in the way JupyterLab reads it (delete outputs from an index to the end, edit the end of
the last stream, append outputs), and no second copy of what the document holds: once
written, content the model no longer needs is let go of (:meth:`CellOutputs.committed`),
and after a run all of it (:meth:`CellOutputs.forget`).

Example:
    >>> from jupyter_loop.execution.outputs.ops import AppendStream
    >>> model = CellOutputs()
    >>> model.apply(AppendStream("stdout", "0\\n10%\\r"))
    >>> model.plan().append
    [{'output_type': 'stream', 'name': 'stdout', 'text': '0\\n10%'}]
    >>> model.committed()
    >>> model.items[0].text.held()  # the document holds the line above
    '10%'
    >>> model.apply(AppendStream("stdout", "50%\\n"))
    >>> model.plan().edit
    (3, '50%\\n')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .budget import OutputBudget
from .budget_model import BudgetModel
from .items import item_from_document
from .ops import AppendOutput, AppendStream, OutputOp
from .sync import SyncPlan
from .terminal import TerminalScreen


class CellOutputs(BudgetModel):
    """A cell's outputs for one run, as the document should hold them (arguments as
    :class:`BudgetModel`'s)."""

    def __init__(
        self,
        budget: OutputBudget | None = None,
        links: Callable[[int | None], str] | None = None,
    ) -> None:
        super().__init__(budget, links)
        self._forgotten: list[tuple[str | None, int | None]] | None = None

    @classmethod
    def replayed(
        cls,
        ops: Iterable[OutputOp],
        budget: OutputBudget | None = None,
        links: Callable[[int | None], str] | None = None,
    ) -> CellOutputs:
        """A run's outputs rebuilt from its edits so far (its journal), none written yet.

        >>> from jupyter_loop.execution.outputs.ops import AppendStream
        >>> model = CellOutputs.replayed([AppendStream("stdout", "0\\n1\\n")])
        >>> model.holds_others(1)  # what the cell holds is not the run's
        >>> plan = model.plan()
        >>> plan.delete_from, plan.append
        (0, [{'output_type': 'stream', 'name': 'stdout', 'text': '0\\n1\\n'}])
        """
        model = cls(budget, links)
        for op in ops:
            model.apply(op)
        model.take_record_edits()  # the run's full record had every one of these
        return model

    def holds_others(self, count: int) -> None:
        """The document holds ``count`` outputs, none of them this model's: all go."""
        self._sync.holds_others(count)

    def _reset_content(self) -> None:
        super()._reset_content()
        self._kept_from = 0  # items before this one hold only what the model needs

    def _rewrite_from(self, index: int) -> None:
        super()._rewrite_from(index)
        self._kept_from = min(self._kept_from, index)

    def has_display(self, display_id: str) -> bool:
        if self._forgotten is not None and any(known == display_id for known, _ in self._forgotten):
            return True
        return super().has_display(display_id)

    @property
    def doc_count(self) -> int:
        """How many outputs the document holds."""
        return self._sync.doc_count

    @property
    def dirty(self) -> bool:
        """Whether the document is behind."""
        return self._forgotten is None and self._sync.behind(len(self.items))

    def plan(self, held: Callable[[int], dict[str, Any]] | None = None) -> SyncPlan | None:
        """What to write so that the document shows :attr:`items`; ``None`` if it does.

        Args:
            held: The document's output at an index, as last written: a rewrite takes
                back what the model let go of from there (see :meth:`committed`).
        """
        if not self.dirty:
            return None
        start = self._sync.rewrite_start(self.items)
        for index in range(start, min(self.doc_count, len(self.items))):
            item = self.items[index]
            if item.released and held is not None:
                item.take_back(held(index))
        self._kept_from = min(self._kept_from, start)
        return self._sync.plan(self.items)

    def committed(self) -> None:
        """The document now shows :attr:`items`: the model lets go of the content it no
        longer needs, so that it holds no second copy of the document.

        It keeps the tail (trimmed at line starts as output arrives, with the lines it
        drops counted), the unfinished line of every stream (a ``\\r`` rewrites it), and,
        until the run's record starts, everything (the record gets it all first). A rewrite
        takes the rest back from the document (:meth:`plan`).
        """
        self._sync.committed(len(self.items))
        if self._budget is not None and self._links is not None and not self._record.started:
            return
        end = self._marker if self._marker is not None else len(self.items)
        for item in self.items[self._kept_from : end]:
            item.release()
        self._kept_from = max(end - 1, 0)  # the last one may get more lines

    def rebase(self, outputs: list[dict[str, Any]]) -> None:
        """Someone else changed the outputs: start from what the document holds, then add
        what it has not seen yet (not what it held before the change: the model let go of
        that, see :meth:`committed`)."""
        index, pending = self._sync.pending_text or (None, "")
        edited = self.items[index] if index is not None else None
        marker = self.items[self._marker] if self._marker is not None else None
        unseen = [
            item
            for item in self.items[self._sync.clean :]
            if item is not marker and not item.released  # the document had these
        ]
        self._reset_content()
        for output in outputs:
            item = item_from_document(output)
            self.items.append(item)
            self._head_size += item.size
        self.committed()
        if edited is not None and pending:
            self._append_rendered(edited.name, pending, edited.part)
        for item in unseen:
            if item.is_stream:
                self._append_rendered(item.name, item.text.value(), item.part)
            else:
                self._add(item)
        last = self.items[-1] if self.items else None
        self._screen = None
        if last is not None and last.is_stream:
            self._screen = TerminalScreen(last.text.held())  # its unfinished line

    @property
    def forgotten(self) -> bool:
        """Whether the content was dropped (:meth:`forget`): :meth:`restore` it first."""
        return self._forgotten is not None

    def forget(self) -> None:
        """Drop the outputs' content, which the document holds, once a run is over; keep
        what finds them again (display ids, parts of the run record)."""
        if self.dirty or self._forgotten is not None:
            return
        self._forgotten = [(item.display_id, item.part) for item in self.items]
        self._reset_content()

    def restore(self, outputs: list[dict[str, Any]]) -> None:
        """Take the content back from the document (after :meth:`forget`)."""
        known, self._forgotten = self._forgotten or [], None
        self.rebase(outputs)
        if len(known) == len(self.items):
            for item, (display_id, part) in zip(self.items, known, strict=True):
                item.display_id, item.part = display_id, part


def fitted(
    outputs: Iterable[dict[str, Any]],
    budget: OutputBudget | None,
    links: Callable[[int | None], str] | None = None,
) -> list[dict[str, Any]]:
    """A run's whole outputs as its cell holds them within ``budget``: what its writer
    wrote, a long stream's middle cut to a marker and a rich output too large replaced by
    a placeholder, linking (``links``) to the full output.

    >>> printed = "".join(f"{i}\\n" for i in range(5000))
    >>> kept = fitted([{"output_type": "stream", "name": "stdout", "text": printed}],
    ...               OutputBudget.from_total(16 * 1024), lambda part: "/full")
    >>> [output["output_type"] for output in kept]
    ['stream', 'display_data', 'stream']
    >>> marker = kept[1]["metadata"]["jupyter_loop"]
    >>> kept[0]["text"][:4], kept[-1]["text"][-5:], marker["full_output"]
    ('0\\n1\\n', '4999\\n', '/full')
    """
    ops: list[OutputOp] = [
        AppendStream(str(output.get("name", "stdout")), str(output.get("text", "")))
        if output.get("output_type") == "stream"
        else AppendOutput(output)
        for output in outputs
    ]
    plan = CellOutputs.replayed(ops, budget, links).plan()
    return plan.append if plan is not None else []
