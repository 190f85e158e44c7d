"""The cells of a live notebook as the model's context needs them, re-read only where changed.

Reading every cell of a 1,000-cell document through pycrdt costs tens of milliseconds
before any output is converted, so a turn keeps one :class:`NotebookSnapshots`: the first
step reads every cell, and a deep observer on the cells marks which ones changed since, so
later steps re-read only those (any insert, delete or move re-reads them all). The
execution state (queued / running) comes from the run markers of the cells that are busy.

Secrets are masked here, as a cell is read, in its whole source and whole outputs: this is
where notebook text enters every path to a model or an external agent (the turn's prompt,
the tools' pages, the notebook map, summaries, inline completions, MCP), and each of them
cuts text to a budget. Masking after a cut would let a cut through a secret leave pieces
the masker no longer recognises (issue 18). Offsets the tools page by count characters of
the masked text, which is what the caller read.

Example:
    >>> from jupyter_ydoc import YNotebook
    >>> from jupyter_loop.document import set_source
    >>> nb = YNotebook()
    >>> nb.append_cell({"id": "c0", "cell_type": "code", "source": "1 + 1", "metadata": {}})
    >>> snapshots = NotebookSnapshots(None)
    >>> [(c.id, c.source) for c in snapshots.cells(nb)]
    [('c0', '1 + 1')]
    >>> set_source(nb.ycells[0], "2 + 2")
    >>> [c.source for c in snapshots.cells(nb)], snapshots.reread
    (['2 + 2'], 1)
    >>> snapshots.close()
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map

from ..execution.board import QUEUED, board
from ..records import CellMarker
from ..secrets import SecretMasker
from .notebook_map import CellSnapshot


def read_cell(ycell: Map, masker: SecretMasker | None) -> CellSnapshot:
    """One cell, outputs included (nbformat dicts), secrets masked (``masker`` None: off).

    The masker is a required argument so that no reader forgets it.

    Example:
        >>> from pycrdt import Doc
        >>> cell = Doc().get("cell", type=Map)
        >>> cell["source"] = "key = 'hunter2-hunter2'"
        >>> read_cell(cell, SecretMasker(["hunter2-hunter2"])).source
        "key = '••••••'"
    """
    youtputs = ycell.get("outputs")
    outputs: list[dict[str, Any]] = youtputs.to_py() or [] if isinstance(youtputs, Array) else []
    source = str(ycell.get("source", ""))
    if masker is not None:
        source, outputs = masker.mask(source), masker.mask_value(_joined(outputs))
    count = ycell.get("execution_count")
    return CellSnapshot(
        id=str(ycell.get("id", "")),
        cell_type=str(ycell.get("cell_type", "code")),
        source=source,
        execution_count=int(count) if isinstance(count, int | float) else None,
        state="running" if ycell.get("execution_state") == "running" else "idle",
        outputs=outputs,
    )


def _joined(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Outputs whose multiline strings (lists of lines, as nbformat allows) are joined, so
    that a secret split over two items is masked like any other."""
    joined = []
    for output in outputs:
        text = output.get("text")
        data = output.get("data")
        if isinstance(text, list):
            output = {**output, "text": "".join(str(line) for line in text)}
        if isinstance(data, dict) and any(_lines(k, v) for k, v in data.items()):
            whole = {k: "".join(map(str, v)) if _lines(k, v) else v for k, v in data.items()}
            output = {**output, "data": whole}
        joined.append(output)
    return joined


def _lines(mime: Any, value: Any) -> bool:
    """A text MIME value held as a list of lines (a JSON value that is a list stays one)."""
    return isinstance(value, list) and isinstance(mime, str) and mime.startswith("text/")


class NotebookSnapshots:
    """Cell snapshots of one live notebook (secrets masked), kept up to date by an observer."""

    def __init__(self, masker: SecretMasker | None) -> None:
        self._masker = masker
        self._doc: Any = None
        self._cells_array: Array | None = None
        self._subscription: Any = None
        self._cells: list[CellSnapshot] = []
        self._dirty: set[int] = set()
        self._all_dirty = True
        self.reread = 0
        """How many cells the last call read again (for tests and benchmarks)."""

    def cells(self, notebook: YNotebook) -> list[CellSnapshot]:
        """The notebook's cells as they are now."""
        if notebook.ydoc is not self._doc:
            self.close()
            self._doc = notebook.ydoc
            self._cells_array = notebook.ycells
            self._subscription = notebook.ycells.observe_deep(self._changed)
            self._all_dirty = True
        with notebook.ydoc.transaction():
            ycells = notebook.ycells
            if self._all_dirty or len(ycells) != len(self._cells):
                self._cells = [read_cell(ycell, self._masker) for ycell in ycells]
                self.reread = len(self._cells)
            else:
                for index in sorted(self._dirty):
                    if 0 <= index < len(self._cells):
                        self._cells[index] = read_cell(ycells[index], self._masker)
                self.reread = len(self._dirty)
            self._all_dirty = False
            self._dirty.clear()
            return self._with_states(notebook)

    def _with_states(self, notebook: YNotebook) -> list[CellSnapshot]:
        busy = [i for i, cell in enumerate(self._cells) if cell.state != "idle"]
        if not busy:
            return list(self._cells)
        markers = board(notebook)
        cells = list(self._cells)
        for index in busy:
            cell = cells[index]
            marker = markers.get(cell.id)
            queued = isinstance(marker, dict) and CellMarker.from_y(marker).state == QUEUED
            if queued:
                cells[index] = CellSnapshot(
                    cell.id, cell.cell_type, cell.source, None, "queued", cell.outputs
                )
        return cells

    def _changed(self, events: Any) -> None:
        for event in events:
            path = event.path
            if path and isinstance(path[0], int):
                self._dirty.add(path[0])
            else:
                self._all_dirty = True

    def close(self) -> None:
        """Stop observing the document."""
        if self._cells_array is not None and self._subscription is not None:
            self._cells_array.unobserve(self._subscription)
        self._doc = self._cells_array = self._subscription = None
        self._cells = []


def sources_with_outputs(notebook: YNotebook) -> dict[str, str]:
    """The whole (unmasked) source of each code cell that shows outputs, by id: what the
    run history's stale marks compare with the source each cell's outputs came from."""
    sources: dict[str, str] = {}
    with notebook.ydoc.transaction():
        for ycell in notebook.ycells:
            outputs = ycell.get("outputs")
            if ycell.get("cell_type") == "code" and outputs is not None and len(outputs):
                sources[str(ycell.get("id", ""))] = str(ycell.get("source", ""))
    return sources


def with_stale_marks(cells: list[CellSnapshot], marks: dict[str, str]) -> list[CellSnapshot]:
    """The cells, each marked with why its outputs are stale (``marks``: by cell id)."""
    if not marks:
        return cells
    return [replace(cell, stale=marks[cell.id]) if cell.id in marks else cell for cell in cells]
