"""Each run's outputs kept on the server, in full when the notebook keeps only part.

A run's record is opened once something is left out of the document (a long stream's
middle, a huge image) and then follows the run as it prints; a run whose outputs fit its
budget is recorded at its end, in one go (a *fitted* record: at most the budget's size).
Layout, one directory per run, ``{root}/{file_id}/{cell_id}/{run_id}/``:

* ``text``: the run's stream outputs, rendered like a terminal, one after another;
* ``outputs``: rich and error outputs as JSON, appended (a display update appends anew);
* ``index.jsonl``: one line per part of the run, in output order; a later line for the
  same part number replaces an earlier one.

Retention: a cell keeps the records of its last ``runs_per_cell`` runs (a run's record
opening, or else the run's end, removes the older ones), so the History view shows the
full output of a cell's recent runs;
one run keeps at most ``max_run_bytes`` (later output is dropped, and the record says so);
all records together keep within ``max_bytes``, the oldest runs going first when a new
record opens: each time for a cut run, at most every :data:`FITTED_WALK_EVERY` seconds for
fitted ones (the walk of the store costs a stat per record; between two walks fitted
records, each within the notebook's budget, may pass the limit by what they add); and
records untouched for ``max_age_days`` are removed when the server starts.

Example:
    >>> import tempfile
    >>> store = FileOutputStore(Path(tempfile.mkdtemp()))
    >>> key = RunKey("file-1", "cell-1", "run1")
    >>> recorder = store.recorder(key)
    >>> recorder.new_stream("stdout", "0\\n1\\n")
    0
    >>> recorder.sync()
    >>> b"".join(store.full_text(key, link=lambda part: f"/{part}"))
    b'0\\n1\\n'
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...errors import Conflict, NotFound
from ..outputs.budget import human_bytes
from .recorder import FileRecorder

NAME_PATTERN = r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}"
"""A file id, cell id (any nbformat allows) or run id; never ``.`` or ``..``."""
_SAFE = re.compile(NAME_PATTERN)
_CHUNK = 1024 * 1024
FITTED_WALK_EVERY = 60.0
"""Seconds between two walks of the store for ``max_bytes`` when only fitted records open."""


@dataclass(frozen=True)
class RunKey:
    """Which run a record belongs to: notebook file id, cell id, run id."""

    file_id: str
    cell_id: str
    run_id: str

    def __post_init__(self) -> None:
        for value in (self.file_id, self.cell_id, self.run_id):
            if not _SAFE.fullmatch(value):
                raise NotFound(f"No full output is kept for '{value}'.")


@dataclass(frozen=True)
class StoredPart:
    """One output of a run's record."""

    part: int
    type: str  # "stream" or "output"
    name: str = ""  # stream name
    output_type: str = ""
    mime_types: tuple[str, ...] = ()
    offset: int = 0
    length: int = 0
    dropped: bool = False  # over the run's size limit: not kept


class RunRecorder(Protocol):
    """Writes one run's full output as it is produced (see :class:`FileRecorder`)."""

    def new_stream(self, name: str, text: str) -> int: ...

    def edit_stream(self, removed: str, insert: str) -> None: ...

    def add_output(self, output: dict[str, Any]) -> int: ...

    def replace_output(self, part: int, output: dict[str, Any]) -> None: ...

    def sync(self) -> None: ...


class OutputStore(Protocol):
    """Where full outputs are kept; the writer records, the REST handler reads."""

    def begin_run(self, key: RunKey) -> None: ...

    def recorder(self, key: RunKey, *, fitted: bool = False) -> RunRecorder: ...

    def discard(self, key: RunKey) -> None: ...

    def parts(self, key: RunKey) -> list[StoredPart]: ...

    def read(self, key: RunKey, part: StoredPart) -> Iterator[bytes]: ...

    def full_text(self, key: RunKey, link: Callable[[int], str]) -> Iterator[bytes]: ...

    def load_output(self, key: RunKey, part: StoredPart) -> dict[str, Any]: ...

    def outputs(self, key: RunKey, max_bytes: int | None) -> list[dict[str, Any]]: ...


class FileOutputStore:
    """Run records under ``root`` (see the module doc for layout and retention).

    Args:
        root: Directory of the store; created when first needed.
        max_run_bytes: Most bytes one run keeps (``None``: no limit).
        max_age_days: :meth:`sweep` removes records untouched for longer (``None``: never).
        runs_per_cell: Records kept per cell, the newest (at least 1).
        max_bytes: Most bytes all records keep together (``None``: no limit).
    """

    def __init__(
        self,
        root: Path,
        *,
        max_run_bytes: int | None = 512 * 1024 * 1024,
        max_age_days: float | None = 30.0,
        runs_per_cell: int = 1,
        max_bytes: int | None = None,
    ) -> None:
        self.root = root
        self._max_run_bytes = max_run_bytes
        self._max_age_days = max_age_days
        self._runs_per_cell = max(runs_per_cell, 1)
        self._max_bytes = max_bytes
        self._walked_at = float("-inf")  # the last walk to keep within max_bytes

    def _run_dir(self, key: RunKey) -> Path:
        return self.root / key.file_id / key.cell_id / key.run_id

    # -- writing -------------------------------------------------------------------------

    def begin_run(self, key: RunKey) -> None:
        """A cell starts a run: the records of its earlier runs but the newest
        ``runs_per_cell - 1`` go."""
        cell_dir = self.root / key.file_id / key.cell_id
        if not cell_dir.is_dir():
            return
        earlier = _oldest_first(d for d in cell_dir.iterdir() if d.name != key.run_id)
        for run_dir in earlier[: max(len(earlier) - (self._runs_per_cell - 1), 0)]:
            shutil.rmtree(run_dir, ignore_errors=True)

    def recorder(self, key: RunKey, *, fitted: bool = False) -> FileRecorder:
        """A fresh record of the run (an earlier record of the same run is replaced); the
        oldest records of other runs go first if all of them are over ``max_bytes``
        (checked at most every :data:`FITTED_WALK_EVERY` seconds for a ``fitted`` run's
        record, one whose outputs fit the notebook's budget)."""
        due = time.monotonic() - self._walked_at >= FITTED_WALK_EVERY
        if self._max_bytes is not None and (not fitted or due):
            self._keep_within(self._max_bytes, but=self._run_dir(key))
        return FileRecorder(self._run_dir(key), self._max_run_bytes)

    def _keep_within(self, max_bytes: int, but: Path) -> None:
        self._walked_at = time.monotonic()
        runs = _oldest_first(d for d in self.root.glob("*/*/*") if d != but)
        sizes = [_size(run_dir) for run_dir in runs]
        total = sum(sizes)
        for run_dir, size in zip(runs, sizes, strict=True):
            if total <= max_bytes:
                break
            shutil.rmtree(run_dir, ignore_errors=True)
            total -= size

    def discard(self, key: RunKey) -> None:
        shutil.rmtree(self._run_dir(key), ignore_errors=True)

    def sweep(self) -> int:
        """Remove records untouched for ``max_age_days``; returns how many went."""
        if self._max_age_days is None or not self.root.is_dir():
            return 0
        cutoff = time.time() - self._max_age_days * 86400
        removed = 0
        for run_dir in self.root.glob("*/*/*"):
            index = run_dir / "index.jsonl"
            stamp = index.stat().st_mtime if index.exists() else run_dir.stat().st_mtime
            if stamp < cutoff:
                shutil.rmtree(run_dir, ignore_errors=True)
                removed += 1
        for cell_dir in self.root.glob("*/*"):
            _remove_if_empty(cell_dir)
        for file_dir in self.root.glob("*"):
            _remove_if_empty(file_dir)
        return removed

    # -- reading -------------------------------------------------------------------------

    def parts(self, key: RunKey) -> list[StoredPart]:
        """The parts of a run's record, in output order."""
        index = self._run_dir(key) / "index.jsonl"
        try:
            lines = index.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError as e:
            kept = (
                "a cell's last run"
                if self._runs_per_cell == 1
                else f"the last {self._runs_per_cell} runs of a cell"
            )
            raise NotFound(
                f"The full output of this run is no longer kept on the server (only {kept} "
                "are, within the store's size)."
            ) from e
        latest: dict[int, StoredPart] = {}
        for line in lines:
            entry = json.loads(line)
            if "part" in entry:
                latest[int(entry["part"])] = _part_from(entry)
        return [latest[number] for number in sorted(latest)]

    def truncated(self, key: RunKey) -> int | None:
        """The run's size limit if output was dropped for it, else ``None``."""
        index = self._run_dir(key) / "index.jsonl"
        for line in index.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("truncated"):
                return int(entry.get("limit", 0))
        return None

    def read(self, key: RunKey, part: StoredPart) -> Iterator[bytes]:
        """The stored bytes of one part (stream text, or an output as JSON)."""
        if part.dropped:
            return
        name = "text" if part.type == "stream" else "outputs"
        with (self._run_dir(key) / name).open("rb") as data:
            data.seek(part.offset)
            left = part.length
            while left > 0:
                chunk = data.read(min(_CHUNK, left))
                if not chunk:
                    return
                left -= len(chunk)
                yield chunk

    def load_output(self, key: RunKey, part: StoredPart) -> dict[str, Any]:
        """An output part as the output dict it was."""
        value = json.loads(b"".join(self.read(key, part)) or b"{}")
        return value if isinstance(value, dict) else {}

    def outputs(self, key: RunKey, max_bytes: int | None) -> list[dict[str, Any]]:
        """The run's outputs as a notebook holds them, to put back into its cell.

        Raises:
            NotFound: The record is no longer kept.
            Conflict: The record is over ``max_bytes`` (the notebook's output budget: the
                notebook kept only part of this run) or lost part of the run.
        """
        parts = self.parts(key)
        size = sum(part.length for part in parts)
        whole = self.truncated(key) is None and not any(part.dropped for part in parts)
        if not whole or (max_bytes is not None and size > max_bytes):
            raise Conflict(
                f"This run's output ({human_bytes(size)}) is more than the notebook keeps of "
                "a cell's output, so it cannot be put back into the cell; open its full "
                "output instead."
            )
        outputs: list[dict[str, Any]] = []
        for part in parts:
            if part.type == "stream":
                text = b"".join(self.read(key, part)).decode("utf-8", "replace")
                outputs.append({"output_type": "stream", "name": part.name, "text": text})
            else:
                outputs.append(self.load_output(key, part))
        return outputs

    def full_text(self, key: RunKey, link: Callable[[int], str]) -> Iterator[bytes]:
        """The whole run as text: streams as printed, other outputs as a line with a link."""
        parts = self.parts(key)
        for part in parts:
            if part.type == "stream":
                yield from self.read(key, part)
                continue
            kinds = ", ".join(part.mime_types) or part.output_type
            if part.dropped:
                yield f"\n[{part.output_type} {part.part}: {kinds}: not kept]\n".encode()
            else:
                size = human_bytes(part.length)
                line = f"\n[{part.output_type} {part.part}: {kinds} ({size}): {link(part.part)}]\n"
                yield line.encode()
        limit = self.truncated(key)
        if limit is not None:
            note = f"jupyter-loop keeps at most {human_bytes(limit)} of a run's output"
            yield f"\n[{note}; the rest of this run's output was dropped]\n".encode()


def _part_from(entry: dict[str, Any]) -> StoredPart:
    return StoredPart(
        part=int(entry["part"]),
        type=str(entry.get("type", "output")),
        name=str(entry.get("name", "")),
        output_type=str(entry.get("output_type", "")),
        mime_types=tuple(str(kind) for kind in entry.get("mime_types", [])),
        offset=int(entry.get("offset", 0)),
        length=int(entry.get("length", 0)),
        dropped=bool(entry.get("dropped", False)),
    )


def _oldest_first(run_dirs: Iterable[Path]) -> list[Path]:
    """Run records, the least recently written first (a record's index is written last)."""

    def written(run_dir: Path) -> float:
        index = run_dir / "index.jsonl"
        try:
            return (index if index.exists() else run_dir).stat().st_mtime
        except OSError:
            return 0.0

    return sorted(run_dirs, key=written)


def _size(run_dir: Path) -> int:
    total = 0
    for path in run_dir.iterdir():
        try:
            total += path.stat().st_size
        except OSError:
            continue
    return total


def _remove_if_empty(directory: Path) -> None:
    try:
        directory.rmdir()
    except OSError:
        pass
