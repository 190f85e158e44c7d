"""Long stream text held as chunks, so appends and tail edits never copy all of it.

Once the document holds a stream, its finished lines can be let go of: edits only ever
touch the unfinished line (see :mod:`.terminal`), and a rewrite takes the lines back from
the document's copy.

Example:
    >>> text = TextBuffer("0\\n1\\n2")
    >>> text.release_lines()
    >>> (text.held(), text.chars, text.released)
    ('2', 5, 4)
    >>> text.take_back("0\\n1\\n2")
    >>> text.value()
    '0\\n1\\n2'
"""

from __future__ import annotations

from .budget import front_cut, text_size


class TextBuffer:
    """Stream text kept as chunks: appends and tail edits do not copy the whole text.

    Attributes:
        chars: Length of the whole text, lines let go of included.
        size: Its size (see :func:`~.budget.text_size`), lines let go of included.
        released: Leading characters let go of (:meth:`release_lines`).
    """

    def __init__(self, text: str = "") -> None:
        self._chunks = [text] if text else []
        self.chars = len(text)
        self.size = text_size(text)
        self.released = 0

    def value(self) -> str:
        """The whole text; lines let go of must be taken back first (:meth:`take_back`)."""
        if self.released:
            raise RuntimeError("the start of this text was let go of: take it back first")
        return self.held()

    def held(self) -> str:
        """The text after the lines let go of."""
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

    def release_lines(self) -> None:
        """Let go of the finished lines (the document holds them); keep the unfinished one."""
        text = self.held()
        cut = text.rfind("\n") + 1
        if cut:
            self._chunks = [text[cut:]] if cut < len(text) else []
            self.released += cut

    def take_back(self, document: str) -> None:
        """Take the lines let go of back from ``document``, the text as last written."""
        if self.released:
            self._chunks = [document[: self.released] + self.held()]
            self.released = 0
