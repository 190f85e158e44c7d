"""Long stream text held as chunks, so appends and tail edits never copy all of it."""

from __future__ import annotations

from .budget import front_cut, text_size


class TextBuffer:
    """Stream text kept as chunks: appends and tail edits do not copy the whole text."""

    def __init__(self, text: str = "") -> None:
        self._chunks = [text] if text else []
        self.chars = len(text)
        self.size = text_size(text)

    def value(self) -> str:
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def append(self, text: str) -> None:
        if text:
            self._chunks.append(text)
            self.chars += len(text)
            self.size += text_size(text)

    def drop_suffix(self, count: int) -> str:
        """Remove up to ``count`` characters from the end; returns what was removed."""
        parts: list[str] = []
        while count > 0 and self._chunks:
            last = self._chunks[-1]
            if len(last) <= count:
                parts.append(self._chunks.pop())
                count -= len(last)
            else:
                parts.append(last[len(last) - count :])
                self._chunks[-1] = last[: len(last) - count]
                count = 0
        removed = "".join(reversed(parts))
        self.chars -= len(removed)
        self.size -= text_size(removed)
        return removed

    def drop_prefix(self, excess: int) -> str:
        """Remove at least ``excess`` bytes from the start, up to a line start if one follows."""
        text = self.value()
        cut = front_cut(text, excess)
        self._chunks = [text[cut:]] if cut < len(text) else []
        removed = text[:cut]
        self.chars -= len(removed)
        self.size -= text_size(removed)
        return removed
