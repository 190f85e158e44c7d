"""The keeper's journal: every IOPub message of an execute request, in order, on disk.

One file per execute request, ``iopub/<msg_id>.jsonl``, opened by the request's
``execute_input`` (requests that run no code, such as a tab's completions, leave nothing)
and closed by its ``idle`` status. A line holds what a replay needs: the message's own id
(a server that follows the kernel live again drops what the journal already gave it),
type, date and content, masked as a cell's outputs are. Each message is masked whole: a
secret split across two messages may stay in the journal (owner-only, removed once the
run is in its notebook) although the notebook masks it.

The journal is bounded (``max_bytes`` for all files of a kernel): the oldest closed files
go first; a request that alone outgrows it stops being journalled, with a last line
saying so, and its replay says lines were lost.

Example:
    >>> import tempfile
    >>> from jupyter_loop.secrets import SecretMasker
    >>> folder = Path(tempfile.mkdtemp())
    >>> journal = IopubJournal(folder, SecretMasker(["hunter2-hunter2"]), 10_000)
    >>> def frames(kind, content, n):
    ...     header = {"msg_id": f"m{n}", "msg_type": kind, "date": "2026-01-01T00:00:00Z"}
    ...     parts = [header, {"msg_id": "run1"}, {}, content]
    ...     return [b"iopub", DELIMITER, b"sig", *(json.dumps(p).encode() for p in parts)]
    >>> journal.record(frames("execute_input", {"execution_count": 3}, 1))
    >>> journal.record(frames("stream", {"name": "stdout", "text": "hunter2-hunter2\\n"}, 2))
    >>> messages, _, lost = read_segment(folder / "run1.jsonl", 0)
    >>> [m["content"].get("text") for m in messages], lost
    ([None, '••••••\\n'], False)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..owner_only import FILE_MODE, private_dir
from ..secrets import SecretMasker

DELIMITER = b"<IDS|MSG>"
SUFFIX = ".jsonl"
TRUNCATED = {"truncated": True}
SECRETS_ON_STDIN = "secrets_on_stdin"
"""Set in an entry's masking settings when its secrets were handed to the keeper on its
standard input instead (``provisioner``): an entry holds no secret."""


def masker_from(spec: dict[str, Any], secrets: list[str] | None = None) -> SecretMasker | None:
    """The masker a keeper uses, from the settings its server wrote in the entry and the
    secrets it handed the keeper on its standard input (never written in the entry)."""
    if not spec.get("enabled"):
        return None
    return SecretMasker(
        [str(value) for value in [*spec.get("secrets", []), *(secrets or [])]],
        environ=dict(os.environ),
        env_name_patterns=tuple(spec.get("env_patterns", ())),
    )


class IopubJournal:
    """Appends the IOPub messages of execute requests to their files (keeper side)."""

    def __init__(self, directory: Path, masker: SecretMasker | None, max_bytes: int) -> None:
        self._directory = private_dir(directory)
        self._masker = masker
        self._max_bytes = max_bytes
        self._open: dict[str, int] = {}  # parent msg_id -> file descriptor
        self._full: set[str] = set()  # requests no longer journalled
        self._size = sum(path.stat().st_size for path in directory.glob(f"*{SUFFIX}"))

    def record(self, frames: list[bytes]) -> None:
        """Journal one message as received on a SUB socket (ZMQ frames)."""
        try:
            start = frames.index(DELIMITER)
            header = json.loads(frames[start + 2])
            parent_id = json.loads(frames[start + 3]).get("msg_id")
            content = json.loads(frames[start + 5])
        except (ValueError, IndexError, AttributeError):
            return  # not a Jupyter message: nothing to replay from it
        kind = header.get("msg_type")
        if not parent_id:
            return
        if kind == "execute_input" and parent_id not in self._open:
            self._open[parent_id] = self._create(parent_id)
        descriptor = self._open.get(parent_id)
        if descriptor is None or parent_id in self._full:
            return
        if self._masker is not None:
            content = self._masker.mask_value(content)
        line = {"id": header.get("msg_id"), "type": kind, "date": header.get("date")}
        line["content"] = content
        self._write(parent_id, descriptor, json.dumps(line, ensure_ascii=False))
        if kind == "status" and content.get("execution_state") == "idle":
            self._close(parent_id)

    def close(self) -> None:
        for parent_id in list(self._open):
            self._close(parent_id)

    def _create(self, parent_id: str) -> int:
        path = self._directory / f"{parent_id}{SUFFIX}"
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)

    def _close(self, parent_id: str) -> None:
        descriptor = self._open.pop(parent_id, None)
        self._full.discard(parent_id)
        if descriptor is not None:
            os.close(descriptor)

    def _write(self, parent_id: str, descriptor: int, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        if self._size + len(data) > self._max_bytes:
            self._make_room(len(data))
        if self._size + len(data) > self._max_bytes:
            self._full.add(parent_id)
            data = (json.dumps(TRUNCATED) + "\n").encode("utf-8")
        os.write(descriptor, data)
        self._size += len(data)

    def _make_room(self, wanted: int) -> None:
        """Remove the oldest closed files until ``wanted`` more bytes fit."""
        closed = [
            path for path in self._directory.glob(f"*{SUFFIX}") if path.stem not in self._open
        ]
        closed.sort(key=lambda path: path.stat().st_mtime)
        for path in closed:
            if self._size + wanted <= self._max_bytes:
                return
            try:
                size = path.stat().st_size
                path.unlink()
            except OSError:
                continue
            self._size -= size


def read_segment(path: Path, offset: int) -> tuple[list[dict[str, Any]], int, bool]:
    """The messages journalled in ``path`` from byte ``offset``, as IOPub messages (server
    side); the offset to read from next, and whether lines were lost to the bound.

    A last line without its newline is being written: it is read next time.
    """
    try:
        with open(path, "rb") as file:
            file.seek(offset)
            data = file.read()
    except FileNotFoundError:
        return [], offset, False
    complete = data.rfind(b"\n") + 1
    messages: list[dict[str, Any]] = []
    lost = False
    for raw in data[:complete].splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if line.get("truncated"):
            lost = True
            continue
        header = {"msg_id": line.get("id"), "msg_type": line.get("type"), "date": line.get("date")}
        messages.append(
            {"header": header, "parent_header": {"msg_id": path.stem}, "content": line["content"]}
        )
    return messages, offset + complete, lost
