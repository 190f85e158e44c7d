"""How to bring a cell's outputs in the document up to date (pure, no I/O).

The document is written the way JupyterLab 4 reads a shared cell (see :mod:`.writer`):
delete outputs from an index to the end, edit the end of the last stream, append outputs.
:class:`OutputSync` knows what the document holds of the model's outputs without a copy of
it: how many outputs it holds, how many leading ones are still as the model has them, and
the change to the end of its last stream since the last write. The model tells it what
changed; :meth:`OutputSync.plan` says what to write.

Example:
    >>> from jupyter_loop.execution.outputs.items import item_from_document as item
    >>> sync = OutputSync()
    >>> shown = [item({"output_type": "stream", "name": "stdout", "text": "10%"})]
    >>> sync.plan(shown).append
    [{'output_type': 'stream', 'name': 'stdout', 'text': '10%'}]
    >>> sync.committed(len(shown))
    >>> sync.plan(shown) is None
    True

    ``\\r`` rewrote the line: the end of the stream the document holds changes.

    >>> sync.edit_end(0, removed="10%", insert="50%\\n")
    >>> sync.plan(shown).edit
    (3, '50%\\n')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .budget import text_bytes
from .items import ShownOutput
from .text_buffer import TextBuffer


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


class OutputSync:
    """What the document holds of a cell's outputs, and what it still needs.

    Attributes:
        doc_count: How many outputs the document holds.
    """

    def __init__(self) -> None:
        self.doc_count = 0
        self._clean = 0  # leading outputs the document holds as they are (but for _edit)
        self._edit: _PendingEdit | None = None
        self._throttle = False

    @property
    def pending_text(self) -> tuple[int, str] | None:
        """The output whose end changed since the last write, and the text appended."""
        return (self._edit.index, self._edit.insert.value()) if self._edit is not None else None

    @property
    def clean(self) -> int:
        """How many leading outputs the document holds as they are."""
        return self._clean

    def behind(self, count: int) -> bool:
        """Whether the document is behind the model's ``count`` outputs."""
        return self._clean < count or self.doc_count != count or self._edit is not None

    # -- what changed ----------------------------------------------------------------------

    def rewrite_from(self, index: int) -> None:
        """Outputs from ``index`` on must be written anew."""
        self._clean = min(self._clean, index)
        if self._edit is not None and self._edit.index >= self._clean:
            self._edit = None

    def edit_end(self, index: int, removed: str, insert: str) -> None:
        """Output ``index``, a stream, lost ``removed`` from its end and gained ``insert``."""
        if index < self._clean and (removed or insert):
            if self._edit is None:
                self._edit = _PendingEdit(index)
            self._edit.merge(removed, insert)

    def moved_on(self) -> None:
        """A long output's tail moved on: the rewrite may wait (see :attr:`SyncPlan.throttle`)."""
        self._throttle = True

    def start_over(self) -> None:
        """The outputs were cleared: everything is written anew."""
        self.rewrite_from(0)
        self._throttle = False

    def forget(self) -> None:
        """The model let go of its outputs: nothing is known to match until it has them back."""
        self._clean = 0

    def holds_others(self, count: int) -> None:
        """The document holds ``count`` outputs none of which is the model's: all go."""
        self.doc_count = count
        self.start_over()

    # -- writing ---------------------------------------------------------------------------

    def rewrite_start(self, items: Sequence[ShownOutput]) -> int:
        """The first output the next write appends (those before it stay as they are)."""
        start = self._clean
        if start < self.doc_count:
            # JupyterLab merges an appended stream into the last output when that output
            # *was* a stream of the same name, even one deleted since: after a deletion,
            # re-add from a non-stream output (or from the first output).
            while 0 < start < len(items) and items[start].is_stream:
                start -= 1
        return start

    def plan(self, items: Sequence[ShownOutput]) -> SyncPlan | None:
        """What to write so that the document shows ``items``; ``None`` if it does."""
        if not self.behind(len(items)):
            return None
        start = self.rewrite_start(items)
        if start < self.doc_count:
            self.rewrite_from(start)
        edit = self._edit
        return SyncPlan(
            delete_from=start if start < self.doc_count else None,
            edit=(edit.removed_bytes, edit.insert.value()) if edit is not None else None,
            append=[item.as_output() for item in items[start:]],
            throttle=self._throttle,
        )

    def committed(self, count: int) -> None:
        """The document now shows the model's ``count`` outputs."""
        self.doc_count = self._clean = count
        self._edit = None
        self._throttle = False
