"""Stream text as a terminal shows it, and text with its terminal escapes removed.

Kernels print progress bars with ``\\r`` (back to the start of the line) and ``\\b``
(one character back). JupyterLab renders a stream like a terminal, so the document
must hold the rendered text, not the raw bytes: otherwise a tqdm bar leaves thousands
of lines in the saved notebook.

Only the current line can change (``\\r`` and ``\\b`` never cross a newline), so the
screen keeps just that line; finished lines are handed out as tail edits and forgotten.

Example:
    >>> screen = TerminalScreen()
    >>> screen.write("10%\\r50%\\r")
    >>> screen.write("100%\\ndone")
    >>> screen.take_edit()
    TailEdit(removed='', insert='100%\\ndone')
    >>> screen.write("\\rDONE\\n")
    >>> screen.take_edit()
    TailEdit(removed='done', insert='DONE\\n')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONTROL = re.compile(r"[\r\n\b]")

LINE_LIMIT = 64 * 1024
"""A line longer than this many characters is no longer rewritten as a whole by ``\\r``:
the screen starts over after it (its memory and the cost of an edit stay bounded)."""


ANSI_ESCAPE = re.compile(  # public: excerpts never cut through one (notebook_view)
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|[@-Z\\-_])"  # two-character escapes
)
_ANSI_PARTIAL_END = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*)?\Z")


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (and without a cut-off one at the end).

    The one stripper for the model's excerpts (``notebook_view``) and for errors served as
    plain text (``full_outputs.handlers``). Rejected: a colours-only pattern (``ESC [ ... m``),
    which the full-output route used to have: it left IPython's OSC 8 file hyperlinks in.

    Example:
        >>> strip_ansi("\\x1b[31mred\\x1b[0m plain\\x1b[3")
        'red plain'
    """
    if "\x1b" not in text:
        return text
    return _ANSI_PARTIAL_END.sub("", ANSI_ESCAPE.sub("", text))


@dataclass(frozen=True)
class TailEdit:
    """Remove ``removed`` from the end of the text, then append ``insert``."""

    removed: str
    insert: str

    @property
    def is_empty(self) -> bool:
        return not self.removed and not self.insert


class TerminalScreen:
    """Rendered stream text, handed out as edits to the end of what was handed out before."""

    def __init__(self, text: str = "") -> None:
        start = text.rfind("\n") + 1
        self._line_start = start
        self._line = text[start:]
        self._cursor = len(self._line)
        self._finished: list[str] = []
        self._mark_line = self._line

    @property
    def length(self) -> int:
        """Length of the rendered text so far."""
        return self._line_start + len(self._line)

    def write(self, chunk: str) -> None:
        """Apply ``chunk``, honouring ``\\r``, ``\\b`` and ``\\n``."""
        if self._cursor == len(self._line) and "\r" not in chunk and "\b" not in chunk:
            self._append(chunk)  # the usual chunk: plain text at the end of the line
            return
        position = 0
        for match in _CONTROL.finditer(chunk):
            self._put(chunk[position : match.start()])
            self._control(match.group())
            position = match.end()
        self._put(chunk[position:])

    def render(self, chunk: str) -> TailEdit:
        """:meth:`write` then :meth:`take_edit`."""
        self.write(chunk)
        return self.take_edit()

    def take_edit(self) -> TailEdit:
        """The edit that brings the text handed out so far up to date."""
        old = self._mark_line
        new = "".join(self._finished) + self._line
        keep = _common_prefix(old, new)
        edit = TailEdit(removed=old[keep:], insert=new[keep:])
        self._finished.clear()
        if len(self._line) > LINE_LIMIT:  # start over: later edits stay after this
            self._line_start += len(self._line)
            self._line, self._cursor = "", 0
        self._mark_line = self._line
        return edit

    def _append(self, chunk: str) -> None:
        newline = chunk.rfind("\n")
        if newline < 0:
            self._line += chunk
        else:
            finished = self._line + chunk[: newline + 1]
            self._finished.append(finished)
            self._line_start += len(finished)
            self._line = chunk[newline + 1 :]
        self._cursor = len(self._line)

    def _put(self, part: str) -> None:
        if not part:
            return
        if self._cursor == len(self._line):
            self._line += part
        else:
            end = self._cursor + len(part)
            self._line = self._line[: self._cursor] + part + self._line[end:]
        self._cursor += len(part)

    def _control(self, char: str) -> None:
        if char == "\n":
            finished = self._line + "\n"
            self._finished.append(finished)
            self._line_start += len(finished)
            self._line = ""
            self._cursor = 0
        elif char == "\r":
            self._cursor = 0
        elif self._cursor > 0:
            self._cursor -= 1


def _common_prefix(old: str, new: str) -> int:
    limit = min(len(old), len(new))
    if old[:limit] == new[:limit]:
        return limit
    # Binary search on slice equality: C-speed comparisons, log(n) of them.
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if old[:middle] == new[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
