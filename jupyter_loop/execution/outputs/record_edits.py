"""What a run's full record gets, as the cell model hands it out (pure, no I/O).

The cell model (:class:`~.cell_outputs.CellOutputs`) writes into a :class:`RecordEdits`
as it would into the record itself, and the writer hands the edits to the output store
(:class:`~.run_record.RunRecord`). Parts are numbered here, in the order the store numbers
them, so placeholders can link to a part before the disk is touched.

Example:
    >>> record = RecordEdits()
    >>> record.new_stream("stdout", "0\\n") is None  # not started: nothing was left out
    True
    >>> record.start()
    >>> record.new_stream("stdout", "0\\n"), record.add_output({"output_type": "error"})
    (0, 1)
    >>> record.take()
    [NewStream(name='stdout', text='0\\n'), NewOutput(output={'output_type': 'error'})]
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

DROPPED_DISPLAYS = 4096
"""Display ids remembered for outputs the document no longer shows (the oldest go)."""


@dataclass(frozen=True)
class NewStream:
    """A stream starts (the next part), with its text so far."""

    name: str
    text: str


@dataclass(frozen=True)
class StreamEdit:
    """Remove ``removed`` from the end of the open stream, then append ``insert``."""

    removed: str
    insert: str


@dataclass(frozen=True)
class NewOutput:
    """A rich or error output (the next part)."""

    output: dict[str, Any]


@dataclass(frozen=True)
class OutputUpdate:
    """Part ``part`` now holds ``output`` (a display update)."""

    part: int
    output: dict[str, Any]


@dataclass(frozen=True)
class Discard:
    """The outputs were cleared: the record so far goes."""


RecordEdit = NewStream | StreamEdit | NewOutput | OutputUpdate | Discard


class RecordEdits:
    """The edits of one run's record, in order; nothing is kept before :meth:`start`."""

    def __init__(self) -> None:
        self.started = False
        self._parts = 0
        self._edits: list[RecordEdit] = []
        self._dropped: OrderedDict[str, list[tuple[int, str]]] = OrderedDict()

    def start(self) -> None:
        """Something is about to be left out of the document: the record starts."""
        self.started, self._parts = True, 0

    def new_stream(self, name: str, text: str) -> int | None:
        """A stream starts; returns its part (``None`` before :meth:`start`)."""
        return self._new(NewStream(name, text))

    def edit_stream(self, removed: str, insert: str) -> None:
        if self.started:
            self._edits.append(StreamEdit(removed, insert))

    def add_output(self, output: dict[str, Any]) -> int | None:
        """A rich or error output; returns its part (``None`` before :meth:`start`)."""
        return self._new(NewOutput(output))

    def replace_output(self, part: int, output: dict[str, Any]) -> None:
        if self.started:
            self._edits.append(OutputUpdate(part, output))

    def discard(self) -> None:
        """The outputs were cleared: the record goes, and stops until started again."""
        if self.started:
            self._edits.append(Discard())
        self.started = False
        self._dropped.clear()

    def take(self) -> list[RecordEdit]:
        """The edits since the last call."""
        edits, self._edits = self._edits, []
        return edits

    # -- outputs the document left out -----------------------------------------------------

    def left_out(self, display_id: str | None, part: int | None, kind: str) -> None:
        """An output the document no longer shows: a display update still reaches its part."""
        if display_id is None or part is None:
            return
        self._dropped.setdefault(display_id, []).append((part, kind))
        self._dropped.move_to_end(display_id)
        while len(self._dropped) > DROPPED_DISPLAYS:
            self._dropped.popitem(last=False)

    def left_out_parts(self, display_id: str) -> list[tuple[int, str]]:
        """The parts (and output types) of left-out outputs made with ``display_id``."""
        return self._dropped.get(display_id, [])

    def _new(self, edit: NewStream | NewOutput) -> int | None:
        if not self.started:
            return None
        self._edits.append(edit)
        self._parts += 1
        return self._parts - 1
