"""What a cell's outputs should look like in the document, within a budget (pure, no I/O).

The writer applies every output edit here as it arrives, so memory stays bounded however
fast a kernel writes: the model holds at most the budget's head, a marker and the tail
(see :mod:`.budget`), and hands the full output to a run record as it goes. At each
batch, :meth:`CellOutputs.plan` says how to bring the document up to date in the way
JupyterLab reads it: delete outputs from an index to the end, edit the end of the last
stream, append outputs.

A run record is opened only when something is first left out; it then receives what the
document already holds, and everything after.

Example:
    >>> from jupyter_loop.execution.ops import AppendStream
    >>> model = CellOutputs()
    >>> model.apply(AppendStream("stdout", "10%\\r"))
    >>> model.plan().append
    [{'output_type': 'stream', 'name': 'stdout', 'text': '10%'}]
    >>> model.committed()
    >>> model.apply(AppendStream("stdout", "50%\\n"))
    >>> model.plan().edit
    (3, '50%\\n')
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from .budget import (
    Omitted,
    OutputBudget,
    clean_text,
    clean_value,
    head_cut,
    marker_output,
    placeholder_output,
    text_bytes,
    text_size,
    value_size,
    with_fallback_text,
)
from .ops import AppendOutput, AppendStream, ClearOutputs, OutputOp, UpdateDisplay
from .outputs_store import RunRecorder
from .terminal import TerminalScreen
from .text_buffer import TextBuffer

LINE_LIMIT = 64 * 1024
"""A line longer than this many characters is no longer rewritten as a whole by ``\\r``:
the terminal screen starts over after it (its memory and the cost of an edit stay bounded)."""

_DROPPED_DISPLAYS = 4096  # display ids remembered for outputs left out of the document


class RunRecords(Protocol):
    """Where a run's full output goes once the document leaves part of it out."""

    def open(self) -> RunRecorder: ...

    def discard(self) -> None: ...

    def link(self, part: int | None) -> str | None:
        """URL of the full output (``None``: the whole run's text)."""
        ...


@dataclass(frozen=True)
class SyncPlan:
    """How to bring the document's outputs up to date, in this order."""

    delete_from: int | None  # delete outputs from this index to the end
    edit: tuple[int, str] | None  # then remove bytes from / append text to the last output
    append: list[dict[str, Any]]  # then append these outputs
    throttle: bool  # the change rewrites the tail: it may wait for the next catch-up


@dataclass
class _PendingEdit:
    """Change to the end of the last stream the document already holds."""

    index: int
    removed_bytes: int = 0
    insert: TextBuffer = field(default_factory=TextBuffer)

    def merge(self, removed: str, insert: str) -> None:
        if removed:
            if len(removed) <= self.insert.chars:
                self.insert.drop_suffix(len(removed))
            else:
                beyond = removed[: len(removed) - self.insert.chars]
                self.insert = TextBuffer()
                self.removed_bytes += text_bytes(beyond)
        self.insert.append(insert)


@dataclass(eq=False)
class _Item:
    """One output as the document should show it."""

    kind: str  # "stream" or the output type
    name: str = ""
    text: TextBuffer = field(default_factory=TextBuffer)
    output: dict[str, Any] = field(default_factory=dict)
    display_id: str | None = None
    part: int | None = None
    rich_size: int = 0

    @property
    def is_stream(self) -> bool:
        return self.kind == "stream"

    @property
    def size(self) -> int:
        return self.text.size if self.is_stream else self.rich_size

    def as_output(self) -> dict[str, Any]:
        if self.is_stream:
            return {"output_type": "stream", "name": self.name, "text": self.text.value()}
        return self.output


def _rich(output: dict[str, Any], **extra: Any) -> _Item:
    kind = str(output.get("output_type", "display_data"))
    return _Item(kind, output=output, rich_size=value_size(output), **extra)


class CellOutputs:
    """A cell's outputs for one run, as the document should hold them.

    Args:
        budget: Byte limits (``None``: keep everything).
        records: Where the full output goes when part of it is left out (``None``: lost).
    """

    def __init__(
        self, budget: OutputBudget | None = None, records: RunRecords | None = None
    ) -> None:
        self._budget = budget
        self._records = records
        self._recorder: RunRecorder | None = None
        self._dropped: OrderedDict[str, list[tuple[int, str]]] = OrderedDict()
        self._reset_content()
        self.doc_count = 0  # outputs the document holds
        self._clean = 0  # leading items the document holds as they are (but for _edit)
        self._edit: _PendingEdit | None = None
        self._trimmed = False
        self._forgotten: list[tuple[str | None, int | None]] | None = None

    def _reset_content(self) -> None:
        self.items: list[_Item] = []
        self._marker: int | None = None  # index of the marker: head before, tail after
        self._head_size = 0
        self._tail_size = 0
        self._omitted = Omitted()
        self._screen: TerminalScreen | None = None  # renders the last item, a stream
        self._line_chars = 0
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
            self._track_line(edit.insert, len(edit.removed))
            self._prepare(text_size(edit.insert))
            if self._recorder is not None:
                self._recorder.edit_stream(edit.removed, edit.insert)
            self._edit_last(edit.removed, edit.insert)
        else:
            screen = TerminalScreen()
            rendered = screen.render(text).insert
            self._screen, self._line_chars = screen, 0
            self._track_line(rendered, 0)
            self._prepare(text_size(rendered))
            item = _Item("stream", name=name)
            if self._recorder is not None:
                item.part = self._recorder.new_stream(name, rendered)
            self._add(item)
            self._edit_last("", rendered)
        if self._line_chars > LINE_LIMIT:
            self._screen, self._line_chars = TerminalScreen(), 0

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
        part = self._recorder.add_output(output) if self._recorder is not None else None
        shown = placeholder_output(output, size, self._link(part)) if too_big else output
        self._screen = None
        self._add(_rich(shown, display_id=display_id, part=part))

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
        for part, kind in self._dropped.get(op.display_id, []):
            if self._recorder is not None:
                self._recorder.replace_output(part, self._updated({"output_type": kind}, op))
        if self._budget is not None and self._marker is not None:
            if self._tail_size > self._budget.tail_max:
                self._trim()
        return found

    def has_display(self, display_id: str) -> bool:
        if display_id in self._dropped:
            return True
        if self._forgotten is not None:
            return any(known == display_id for known, _ in self._forgotten)
        return any(item.display_id == display_id for item in self.items)

    # -- syncing the document ------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        """Whether the document is behind."""
        if self._forgotten is not None:
            return False
        count = len(self.items)
        return self._clean < count or self.doc_count != count or self._edit is not None

    def plan(self) -> SyncPlan | None:
        """What to write so that the document shows :attr:`items`; ``None`` if it does."""
        if not self.dirty:
            return None
        start = self._clean
        if start < self.doc_count:
            # JupyterLab merges an appended stream into the last output when that output
            # *was* a stream of the same name, even one deleted since: after a deletion,
            # re-add from a non-stream output (or from the first output).
            while 0 < start < len(self.items) and self.items[start].is_stream:
                start -= 1
            self._dirty(start)
        edit = self._edit
        return SyncPlan(
            delete_from=start if start < self.doc_count else None,
            edit=(edit.removed_bytes, edit.insert.value()) if edit is not None else None,
            append=[item.as_output() for item in self.items[start:]],
            throttle=self._trimmed,
        )

    def committed(self) -> None:
        """The document now shows :attr:`items`."""
        self.doc_count = self._clean = len(self.items)
        self._edit = None
        self._trimmed = False

    def rebase(self, outputs: list[dict[str, Any]]) -> None:
        """Someone else changed the outputs: start from what the document holds, then add
        what it has not seen yet."""
        pending = self._edit.insert.value() if self._edit is not None else ""
        edited = self.items[self._edit.index] if self._edit is not None else None
        marker = self.items[self._marker] if self._marker is not None else None
        unseen = [item for item in self.items[self._clean :] if item is not marker]
        self._reset_content()
        for output in outputs:
            item = _from_document(output)
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
            self._screen = TerminalScreen(last.text.value())
            self._track_line(last.text.value(), 0)

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
        self._clean = 0  # nothing is known to match until restored

    def restore(self, outputs: list[dict[str, Any]]) -> None:
        """Take the content back from the document (after :meth:`forget`)."""
        known, self._forgotten = self._forgotten or [], None
        self._clean = self.doc_count
        self.rebase(outputs)
        if len(known) == len(self.items):
            for item, (display_id, part) in zip(self.items, known, strict=True):
                item.display_id, item.part = display_id, part

    def sync_records(self) -> None:
        if self._recorder is not None:
            self._recorder.sync()

    # -- the budget ----------------------------------------------------------------------

    def _prepare(self, growth: int) -> None:
        """Open the run record before an edit that would leave something out."""
        budget = self._budget
        if budget is not None and self._marker is None:
            if self._head_size + growth > budget.head:
                self._start_recording()

    def _start_recording(self) -> None:
        if self._recorder is not None or self._records is None:
            return
        recorder = self._records.open()
        for item in self.items:
            if item.is_stream:
                item.part = recorder.new_stream(item.name, item.text.value())
            else:
                item.part = recorder.add_output(item.output)
        self._recorder = recorder

    def _add(self, item: _Item) -> None:
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
        # The head is full: keep whole lines in it, the rest starts the tail.
        self._head_size += self._set_text(index, removed, "")
        current = item.text.value()
        whole = current + insert
        room = budget.head - (self._head_size - item.text.size)
        keep = max(head_cut(whole, room), current.rfind("\n") + 1)
        if keep >= len(current):
            self._head_size += self._set_text(index, "", insert[: keep - len(current)])
        else:
            self._head_size += self._set_text(index, current[keep:], "")
        rest = whole[keep:]
        if not item.text.chars:
            del self.items[index]
            self._dirty(index)
        self._start_overflow()
        self._add(_Item("stream", name=item.name, part=item.part))
        self._edit_last("", rest)

    def _set_text(self, index: int, removed: str, insert: str) -> int:
        """Edit the end of item ``index`` (the last); returns the change in bytes."""
        item = self.items[index]
        before = item.text.size
        gone = item.text.drop_suffix(len(removed)) if removed else ""
        item.text.append(insert)
        if index < self._clean and (gone or insert):
            if self._edit is None:
                self._edit = _PendingEdit(index)
            self._edit.merge(gone, insert)
        return item.text.size - before

    def _start_overflow(self) -> None:
        self._start_recording()
        self._marker = len(self.items)
        self.items.append(_rich(self._marker_output()))
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
                self._remember_dropped(item)
        self.items[self._marker] = _rich(self._marker_output())
        self._dirty(self._marker)
        self._trimmed = True

    def _marker_output(self) -> dict[str, Any]:
        assert self._budget is not None
        return marker_output(self._omitted, self._link(None), self._budget)

    def _remember_dropped(self, item: _Item) -> None:
        if item.display_id is None or item.part is None:
            return
        self._dropped.setdefault(item.display_id, []).append((item.part, item.kind))
        self._dropped.move_to_end(item.display_id)
        while len(self._dropped) > _DROPPED_DISPLAYS:
            self._dropped.popitem(last=False)

    # -- helpers -------------------------------------------------------------------------

    def _update_item(self, index: int, item: _Item, op: UpdateDisplay) -> None:
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
        if self._recorder is not None and item.part is not None:
            self._recorder.replace_output(item.part, full)
        shown = placeholder_output(full, size, self._link(item.part)) if over else full
        updated = _rich(shown, display_id=item.display_id, part=item.part)
        if over and grows_head and budget is not None:
            if self._head_size - item.size + updated.size > budget.head:  # frozen: be brief
                shown = placeholder_output(full, size, self._link(item.part), preview=False)
                updated = _rich(shown, display_id=item.display_id, part=item.part)
        if in_head:
            self._head_size += updated.size - item.size
        else:
            self._tail_size += updated.size - item.size
        self.items[index] = updated
        self._dirty(index)

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
            self._add(_Item("stream", name=name, part=part))
        self._edit_last("", text)

    def _track_line(self, insert: str, removed_chars: int) -> None:
        newline = insert.rfind("\n")
        if newline >= 0:
            self._line_chars = len(insert) - newline - 1
        else:
            self._line_chars += len(insert) - removed_chars

    def _link(self, part: int | None) -> str | None:
        return self._records.link(part) if self._records is not None else None

    def _dirty(self, index: int) -> None:
        """Items from ``index`` on must be written anew."""
        self._clean = min(self._clean, index)
        if self._edit is not None and self._edit.index >= self._clean:
            self._edit = None

    def _apply_pending_clear(self) -> None:
        if self._pending_clear:
            self._clear()

    def _clear(self) -> None:
        if self._recorder is not None and self._records is not None:
            self._records.discard()
        self._recorder = None
        self._dropped.clear()
        self._reset_content()
        self._dirty(0)
        self._trimmed = False


def _from_document(output: dict[str, Any]) -> _Item:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        text = text if isinstance(text, str) else "".join(text)
        return _Item("stream", name=str(output.get("name", "stdout")), text=TextBuffer(text))
    return _rich(output)
