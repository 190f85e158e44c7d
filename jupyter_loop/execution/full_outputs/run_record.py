"""A run's full output in the output store, written from the cell model's record edits.

The cell model says what the record of a run gets (:mod:`.record_edits`, its parts
numbered); :class:`RunRecord` writes that into the store. The record is opened with its
first edit: as the run prints once something of it is cut, else at its end (``fitted``:
the whole run's outputs in one go, see ``store``). The disk failing
(full, read-only) must not cost the notebook its outputs: the record is then given up,
with a warning in the log.

Example:
    >>> import logging, tempfile
    >>> from pathlib import Path
    >>> from jupyter_loop.execution.full_outputs.store import FileOutputStore
    >>> from jupyter_loop.execution.outputs.record_edits import NewStream, StreamEdit
    >>> store = FileOutputStore(Path(tempfile.mkdtemp()))
    >>> key = RunKey("file-1", "cell-1", "run1")
    >>> record = RunRecord.begin(store, key, "/outputs", logging.getLogger("example"))
    >>> record.apply([NewStream("stdout", "0\\n"), StreamEdit("", "1\\n")])
    >>> record.sync()
    >>> b"".join(store.full_text(key, link=record.link))
    b'0\\n1\\n'
    >>> record.link(3)
    '/outputs/file-1/cell-1/run1/3'
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from ..outputs.record_edits import (
    Discard,
    NewOutput,
    NewStream,
    OutputUpdate,
    RecordEdit,
    StreamEdit,
)
from .store import OutputStore, RunKey, RunRecorder


def run_links(prefix: str, key: RunKey) -> Callable[[int | None], str]:
    """The URL of part ``part`` of a run's full output (``None``: the whole run's text),
    under the full-output endpoint at ``prefix``."""
    url = f"{prefix.rstrip('/')}/{key.file_id}/{key.cell_id}/{key.run_id}"
    return lambda part: url if part is None else f"{url}/{part}"


class RunRecord:
    """One run's record in the output store, and the links to it.

    Use :meth:`begin`. The records of the cell's earlier runs go when this one's opens,
    or at the run's end (:meth:`ended`) if it never does: not as the run starts, where
    the directories' removal held the server's event loop while the kernel ran the cell
    and read its answer late (a trivial cell's run over the runs socket, timed
    step by step: 3.8 ms of 19 on a loaded 2-core machine, its reply read as late).
    """

    def __init__(self, store: OutputStore, key: RunKey, prefix: str, log: logging.Logger) -> None:
        self._store = store
        self._key = key
        self._log = log
        self.link = run_links(prefix, key)
        self._recorder: RunRecorder | None = None
        self._open = False  # opened (the recorder may have been given up since)
        self._earlier_gone = False  # the cell's earlier records were removed

    @classmethod
    def begin(cls, store: OutputStore, key: RunKey, prefix: str, log: logging.Logger) -> RunRecord:
        """The record of a run that starts (earlier runs' records of the cell go when it
        opens, or at the run's end)."""
        return cls(store, key, prefix, log)

    def ended(self) -> None:
        """The run is over: the cell's earlier records go, if this one never opened."""
        self._remove_earlier()

    def _remove_earlier(self) -> None:
        if self._earlier_gone:
            return
        self._earlier_gone = True
        try:
            self._store.begin_run(self._key)
        except OSError as e:
            self._log.warning("jupyter-loop could not remove earlier full outputs: %s", e)

    def apply(self, edits: Iterable[RecordEdit], *, fitted: bool = False) -> None:
        """Write ``edits``; ``fitted``: they are a whole run whose outputs fit the
        notebook's budget, given at its end."""
        for edit in edits:
            if isinstance(edit, Discard):
                self._discard()
                continue
            if not self._open:
                self._start(fitted)
            self._write(edit)

    def sync(self) -> None:
        """Write what the recorder buffers (at each batch of the document)."""
        self._write(None)

    def _start(self, fitted: bool) -> None:
        self._remove_earlier()
        self._open = True
        try:
            self._recorder = self._store.recorder(self._key, fitted=fitted)
        except OSError as e:
            self._log.warning("jupyter-loop cannot keep the full output of a run: %s", e)

    def _discard(self) -> None:
        if not self._open:
            return
        self._open, self._recorder = False, None
        try:
            self._store.discard(self._key)
        except OSError as e:
            self._log.warning("jupyter-loop could not remove a full output: %s", e)

    def _write(self, edit: RecordEdit | None) -> None:
        """Hand ``edit`` (``None``: a sync) to the recorder, unless the disk failed it."""
        recorder = self._recorder
        if recorder is None:
            return
        try:
            if isinstance(edit, NewStream):
                recorder.new_stream(edit.name, edit.text)
            elif isinstance(edit, StreamEdit):
                recorder.edit_stream(edit.removed, edit.insert)
            elif isinstance(edit, NewOutput):
                recorder.add_output(edit.output)
            elif isinstance(edit, OutputUpdate):
                recorder.replace_output(edit.part, edit.output)
            else:
                recorder.sync()
        except OSError as e:
            self._log.warning("jupyter-loop stopped keeping a run's full output: %s", e)
            self._recorder = None
