"""What a cell's outputs are after each edit, within a budget (pure, no I/O).

The writer applies every output edit here as it arrives, so memory stays bounded however
fast a kernel writes: the model holds at most the budget's head, a marker and the tail
(see :mod:`.budget`). It tells an :class:`~.sync.OutputSync` what changed, and
hands out what the run's full record gets, part by part (:mod:`.record_edits`). The record
starts only when something is first left out; it then gets everything so far.

Example:
    >>> from jupyter_loop.execution.outputs.ops import AppendStream
    >>> from jupyter_loop.execution.outputs.record_edits import NewStream, StreamEdit
    >>> model = BudgetModel(OutputBudget(200, 200, 100), links=lambda part: "/full")
    >>> model.apply(AppendStream("stdout", "10%\\r50%\\n"))
    >>> [item.as_output()["text"] for item in model.items]
    ['50%\\n']
    >>> model.take_record_edits()  # nothing was left out
    []

    A long stream keeps its head and tail around a marker; the record gets all of it.

    >>> text = "".join(f"{i}\\n" for i in range(100))
    >>> model.apply(AppendStream("stdout", text))
    >>> [item.kind for item in model.items]
    ['stream', 'display_data', 'stream']
    >>> model.take_record_edits() == [NewStream("stdout", "50%\\n"), StreamEdit("", text)]
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .budget import (
    Omitted,
    OutputBudget,
    clean_text,
    clean_value,
    head_cut,
    marker_output,
    placeholder_output,
    text_size,
    value_size,
    with_fallback_text,
)
from .items import ShownOutput, rich_item
from .ops import AppendOutput, AppendStream, ClearOutputs, OutputOp, UpdateDisplay
from .record_edits import RecordEdit, RecordEdits
from .sync import OutputSync
from .terminal import TerminalScreen


class BudgetModel:
    """A cell's outputs for one run, within a budget (:class:`~.cell_outputs.CellOutputs`
    adds what the document holds of them).

    Args:
        budget: Byte limits (``None``: keep everything).
        links: URL of a part of the run's full output (``None``: the whole run's text);
            ``None``: no full output is kept, what is left out is lost.
    """

    def __init__(
        self,
        budget: OutputBudget | None = None,
        links: Callable[[int | None], str] | None = None,
    ) -> None:
        self._budget = budget
        self._links = links
        self._record = RecordEdits()
        self._sync = OutputSync()  # told what changed
        self._reset_content()

    def _reset_content(self) -> None:
        self.items: list[ShownOutput] = []
        self._marker: int | None = None  # index of the marker: head before, tail after
        self._head_size = 0
        self._tail_size = 0
        self._omitted = Omitted()
        self._screen: TerminalScreen | None = None  # renders the last item, a stream
        self._pending_clear = False

    # -- edits -------------------------------------------------------------------------

    def apply(self, op: OutputOp) -> None:
        if isinstance(op, AppendStream):
            self.stream(op.name, op.text)
        elif isinstance(op, AppendOutput):
            self.output(op.output, op.display_id)
        elif isinstance(op, ClearOutputs):
            self.clear(op.wait)
        else:
            self.update_display(op)

    def stream(self, name: str, text: str) -> None:
        text = clean_text(text)
        if not text:
            return
        self._apply_pending_clear()
        last = self.items[-1] if self.items else None
        if last is not None and last.is_stream and last.name == name and self._screen:
            edit = self._screen.render(text)
            if edit.is_empty:
                return
            self._prepare(text_size(edit.insert))
            self._record.edit_stream(edit.removed, edit.insert)
            self._edit_last(edit.removed, edit.insert)
        else:
            screen = TerminalScreen()
            rendered = screen.render(text).insert
            self._screen = screen
            self._prepare(text_size(rendered))
            self._add(
                ShownOutput("stream", name=name, part=self._record.new_stream(name, rendered))
            )
            self._edit_last("", rendered)

    def output(self, output: dict[str, Any], display_id: str | None = None) -> None:
        output = with_fallback_text(clean_value(output))
        self._apply_pending_clear()
        size = value_size(output)
        budget = self._budget
        too_big = budget is not None and size > budget.rich_limit
        if too_big:
            self._start_recording()
        else:
            self._prepare(size)
        part = self._record.add_output(output)
        shown = placeholder_output(output, size, self._link(part)) if too_big else output
        self._screen = None
        self._add(rich_item(shown, display_id=display_id, part=part))

    def clear(self, wait: bool = False) -> None:
        if wait:
            self._pending_clear = True
        else:
            self._clear()

    def update_display(self, op: UpdateDisplay) -> bool:
        """Show new data in every output made with ``op.display_id``; ``False`` if none."""
        found = False
        for index, item in enumerate(self.items):
            if item.display_id == op.display_id:
                found = True
                self._update_item(index, item, op)
        for part, kind in self._record.left_out_parts(op.display_id):
            self._record.replace_output(part, self._updated({"output_type": kind}, op))
        if self._budget is not None and self._marker is not None:
            if self._tail_size > self._budget.tail_max:
                self._trim()
        return found

    def has_display(self, display_id: str) -> bool:
        if self._record.left_out_parts(display_id):
            return True
        return any(item.display_id == display_id for item in self.items)

    def record_whole(self) -> None:
        """Give the run's record every output it has not had yet: at a run's end, so that
        a run whose output fit the budget is kept too (the History view shows an earlier
        run's outputs from its record)."""
        self._start_recording()

    def take_record_edits(self) -> list[RecordEdit]:
        """What the run's full record gets since the last call (see :mod:`.run_record`)."""
        return self._record.take()

    # -- the budget ----------------------------------------------------------------------

    def _prepare(self, growth: int) -> None:
        """Open the run record before an edit that would leave something out."""
        budget = self._budget
        if budget is not None and self._marker is None:
            if self._head_size + growth > budget.head:
                self._start_recording()

    def _start_recording(self) -> None:
        """Start the run's record with everything so far (nothing was left out yet)."""
        if self._record.started or self._links is None:
            return
        self._record.start()  # nothing was let go of yet (see CellOutputs.committed)
        for item in self.items:
            if item.is_stream:
                item.part = self._record.new_stream(item.name, item.text.value())
            else:
                item.part = self._record.add_output(item.output)

    def _add(self, item: ShownOutput) -> None:
        budget = self._budget
        if budget is None:
            self.items.append(item)
            return
        if self._marker is None:
            if self._head_size + item.size <= budget.head:
                self.items.append(item)
                self._head_size += item.size
                return
            self._start_overflow()
        self.items.append(item)
        self._tail_size += item.size
        if self._tail_size > budget.tail_max:
            self._trim()

    def _edit_last(self, removed: str, insert: str) -> None:
        """Apply a terminal edit to the last item (a stream), within the budget."""
        index = len(self.items) - 1
        item = self.items[index]
        budget = self._budget
        if budget is None:
            self._set_text(index, removed, insert)
            return
        if self._marker is not None:
            self._tail_size += self._set_text(index, removed, insert)
            if self._tail_size > budget.tail_max:
                self._trim()
            return
        gone = min(text_size(removed), item.text.size)
        if self._head_size - gone + text_size(insert) <= budget.head:
            self._head_size += self._set_text(index, removed, insert)
            return
        # The head is full: keep whole lines in it, the rest starts the tail. Only the
        # unfinished line can move (the lines before it may have been let go of).
        self._head_size += self._set_text(index, removed, "")
        held = item.text.held()
        whole = held + insert
        room = budget.head - self._head_size + text_size(held)
        keep = max(head_cut(whole, room), held.rfind("\n") + 1)
        if keep >= len(held):
            self._head_size += self._set_text(index, "", insert[: keep - len(held)])
        else:
            self._head_size += self._set_text(index, held[keep:], "")
        rest = whole[keep:]
        if not item.text.chars:
            del self.items[index]
            self._rewrite_from(index)
        self._start_overflow()
        self._add(ShownOutput("stream", name=item.name, part=item.part))
        self._edit_last("", rest)

    def _set_text(self, index: int, removed: str, insert: str) -> int:
        """Edit the end of item ``index`` (the last); returns the change in bytes."""
        item = self.items[index]
        before = item.text.size
        gone = item.text.drop_suffix(len(removed)) if removed else ""
        item.text.append(insert)
        self._sync.edit_end(index, gone, insert)
        return item.text.size - before

    def _start_overflow(self) -> None:
        self._start_recording()
        self._marker = len(self.items)
        self.items.append(rich_item(self._marker_output()))
        self._tail_size = 0

    def _trim(self) -> None:
        """Drop the oldest part of the tail down to ``tail_keep`` bytes."""
        assert self._budget is not None and self._marker is not None
        start = self._marker + 1
        excess = self._tail_size - self._budget.tail_keep
        while excess > 0 and start < len(self.items):
            item = self.items[start]
            newest = start == len(self.items) - 1
            if item.is_stream and (newest or item.size > excess):
                gone = item.text.drop_prefix(excess)
                self._omitted.add_text(gone)
                self._tail_size -= text_size(gone)
                break
            if newest:
                break  # the newest rich output stays
            del self.items[start]
            self._tail_size -= item.size
            excess -= item.size
            if item.is_stream:
                self._omitted.add_text(item.text.value())
            else:
                self._omitted.add_output(item.size)
                self._record.left_out(item.display_id, item.part, item.kind)
        self.items[self._marker] = rich_item(self._marker_output())
        self._rewrite_from(self._marker)
        self._sync.moved_on()

    def _marker_output(self) -> dict[str, Any]:
        assert self._budget is not None
        return marker_output(self._omitted, self._link(None), self._budget)

    # -- helpers -------------------------------------------------------------------------

    def _update_item(self, index: int, item: ShownOutput, op: UpdateDisplay) -> None:
        full = self._updated(item.output, op)
        size = value_size(full)
        budget = self._budget
        in_head = self._marker is None or index < self._marker
        grows_head = in_head and size > item.size
        over = budget is not None and (
            size > budget.rich_limit
            or (grows_head and self._head_size - item.size + size > budget.head)
        )
        if over:
            self._start_recording()
        if item.part is not None:
            self._record.replace_output(item.part, full)
        shown = placeholder_output(full, size, self._link(item.part)) if over else full
        updated = rich_item(shown, display_id=item.display_id, part=item.part)
        if over and grows_head and budget is not None:
            if self._head_size - item.size + updated.size > budget.head:  # frozen: be brief
                shown = placeholder_output(full, size, self._link(item.part), preview=False)
                updated = rich_item(shown, display_id=item.display_id, part=item.part)
        if in_head:
            self._head_size += updated.size - item.size
        else:
            self._tail_size += updated.size - item.size
        self.items[index] = updated
        self._rewrite_from(index)

    @staticmethod
    def _updated(output: dict[str, Any], op: UpdateDisplay) -> dict[str, Any]:
        full: dict[str, Any] = {
            "output_type": output.get("output_type", "display_data"),
            "data": clean_value(op.data),
            "metadata": clean_value(op.metadata),
        }
        if "execution_count" in output:
            full["execution_count"] = output["execution_count"]
        return with_fallback_text(full)

    def _append_rendered(self, name: str, text: str, part: int | None) -> None:
        last = self.items[-1] if self.items else None
        if last is None or not last.is_stream or last.name != name:
            self._add(ShownOutput("stream", name=name, part=part))
        self._edit_last("", text)

    def _rewrite_from(self, index: int) -> None:
        """Items from ``index`` on changed: the document must get them anew."""
        self._sync.rewrite_from(index)

    def _link(self, part: int | None) -> str | None:
        return self._links(part) if self._links is not None else None

    def _apply_pending_clear(self) -> None:
        if self._pending_clear:
            self._clear()

    def _clear(self) -> None:
        self._record.discard()
        self._reset_content()
        self._sync.start_over()
