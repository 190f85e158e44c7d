"""One run's record in the full-output store, written as the run prints.

Stream text is buffered and written at each :meth:`FileRecorder.sync` (a batch of the
document) or past :data:`_WRITE_AT` bytes; rich outputs are appended as JSON, and each
part gets a line in ``index.jsonl`` (see ``store`` for the layout). The record
keeps at most ``max_bytes`` and says where it stopped.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...owner_only import open_private, private_dir
from ..outputs.budget import dumps

_WRITE_AT = 1024 * 1024  # buffered stream text is written out past this many bytes


@dataclass
class _OpenStream:
    part: int
    name: str
    offset: int
    length: int = 0


class FileRecorder:
    """A run's record on disk; stream text is buffered and written at :meth:`sync`."""

    def __init__(self, directory: Path, max_bytes: int | None) -> None:
        private_dir(directory)
        self._text_path = directory / "text"
        self._outputs_path = directory / "outputs"
        self._index_path = directory / "index.jsonl"
        for path in (self._text_path, self._outputs_path, self._index_path):
            with open_private(path, "wb"):
                pass
        self._max = max_bytes
        self._text_size = 0  # on disk and buffered
        self._written = 0  # on disk
        self._outputs_size = 0
        self._buffer = bytearray()
        self._index: list[dict[str, Any]] = []
        self._parts = 0
        self._stream: _OpenStream | None = None
        self._indexed: tuple[int, int] | None = None  # the open stream as last indexed
        self._full = False

    def new_stream(self, name: str, text: str) -> int:
        self._close_stream()
        part = self._next_part()
        self._stream = _OpenStream(part, name, self._text_size)
        self._append(text)
        return part

    def edit_stream(self, removed: str, insert: str) -> None:
        """Remove ``removed`` from the end of the open stream, then append ``insert``."""
        stream = self._stream
        if stream is None:
            return
        if removed:
            count = min(len(removed.encode("utf-8", "surrogatepass")), stream.length)
            stream.length -= count
            self._text_size -= count
            if count <= len(self._buffer):
                del self._buffer[len(self._buffer) - count :]
            else:
                self._write_text()
                self._written = self._text_size
                os.truncate(self._text_path, self._written)
        if insert:
            self._append(insert)

    def add_output(self, output: dict[str, Any]) -> int:
        self._close_stream()
        part = self._next_part()
        self._put(part, output)
        return part

    def replace_output(self, part: int, output: dict[str, Any]) -> None:
        self._put(part, output)

    def sync(self) -> None:
        """Write buffered text and the index (the open stream's current length included)."""
        self._write_text()
        stream = self._stream
        if stream is not None and (stream.part, stream.length) != self._indexed:
            self._index.append(self._stream_entry(stream))
        if self._index:
            lines = "".join(json.dumps(entry) + "\n" for entry in self._index)
            with self._index_path.open("a", encoding="utf-8") as index:
                index.write(lines)
            self._index.clear()

    # -- internals ---------------------------------------------------------------------

    def _next_part(self) -> int:
        self._parts += 1
        return self._parts - 1

    def _room(self, size: int) -> bool:
        if self._full:
            return False
        if self._max is not None and self._text_size + self._outputs_size + size > self._max:
            self._full = True
            self._index.append({"truncated": True, "limit": self._max})
            return False
        return True

    def _append(self, text: str) -> None:
        assert self._stream is not None
        data = text.encode("utf-8", "surrogatepass")
        if not data or not self._room(len(data)):
            return
        self._buffer += data
        self._text_size += len(data)
        self._stream.length += len(data)
        if len(self._buffer) >= _WRITE_AT:
            self._write_text()

    def _write_text(self) -> None:
        if self._buffer:
            with self._text_path.open("ab") as text:
                text.write(self._buffer)
            self._written += len(self._buffer)
            self._buffer.clear()

    def _put(self, part: int, output: dict[str, Any]) -> None:
        data = output.get("data")
        entry: dict[str, Any] = {
            "part": part,
            "type": "output",
            "output_type": output.get("output_type", ""),
            "mime_types": sorted(data) if isinstance(data, dict) else [],
        }
        payload = dumps(output)
        if not self._room(len(payload)):
            self._index.append({**entry, "dropped": True})
            return
        with self._outputs_path.open("ab") as outputs:
            outputs.write(payload)
        entry.update(offset=self._outputs_size, length=len(payload))
        self._outputs_size += len(payload)
        self._index.append(entry)

    def _close_stream(self) -> None:
        if self._stream is not None:
            self._index.append(self._stream_entry(self._stream))
            self._stream = None

    def _stream_entry(self, stream: _OpenStream) -> dict[str, Any]:
        self._indexed = (stream.part, stream.length)
        return {
            "part": stream.part,
            "type": "stream",
            "name": stream.name,
            "offset": stream.offset,
            "length": stream.length,
        }
