"""What the terminal client prints of a cell's outputs as they grow (pure, no I/O).

The shared document already holds stream text as a terminal renders it (``\\r`` applied by
:class:`~jupyter_loop.execution.terminal.TerminalScreen` on the server), so following a cell
means printing what was added since last time. Only the last line of the last output can
still change (a progress bar): finished lines are printed once; the open line is shown and
redrawn in place on a terminal, and printed when it is finished (or the cell ends) when the
output is piped.

Example:
    >>> follower = OutputFollower(Style(tty=False))
    >>> follower.update([{"output_type": "stream", "name": "stdout", "text": "a\\n10%"}])
    'a\\n'
    >>> follower.update([{"output_type": "stream", "name": "stdout", "text": "a\\n100%\\nb\\n"}])
    '100%\\nb\\n'
    >>> follower.update([{"output_type": "stream", "name": "stdout", "text": "a\\n100%\\nb\\n"},
    ...                  {"output_type": "error", "ename": "KeyError", "evalue": "'x'",
    ...                   "traceback": ["\\x1b[31mKeyError\\x1b[0m: 'x'"]}])
    "KeyError: 'x'\\n"
    >>> follower.finish()
    ''
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RED, DIM, BOLD, GREEN, YELLOW, RESET = "31", "2", "1", "32", "33", "0"


@dataclass(frozen=True)
class Style:
    """Colours (ANSI) only on a terminal; plain text when piped."""

    tty: bool

    def paint(self, text: str, code: str) -> str:
        """Example:
        >>> Style(tty=False).paint("x", RED), Style(tty=True).paint("x", RED)
        ('x', '\\x1b[31mx\\x1b[0m')
        """
        return f"\x1b[{code}m{text}\x1b[0m" if self.tty and text else text

    def plain(self, text: str) -> str:
        """Terminal escapes kept on a terminal, removed when piped."""
        return text if self.tty else _ANSI.sub("", text)


def output_text(output: dict[str, Any], style: Style) -> str:
    """One output as terminal text (images and HTML as a short placeholder).

    Example:
        >>> output_text({"output_type": "execute_result", "data": {"text/plain": "42"}},
        ...             Style(tty=False))
        '42\\n'
        >>> output_text({"output_type": "display_data", "data": {"image/png": "iVBO"}},
        ...             Style(tty=False))
        '[image/png]\\n'
    """
    kind = output.get("output_type")
    if kind == "stream":
        text = _joined(output.get("text", ""))
        return style.paint(text, RED) if output.get("name") == "stderr" else text
    if kind == "error":
        lines = [str(line) for line in output.get("traceback") or []]
        text = "\n".join(lines) or f"{output.get('ename')}: {output.get('evalue')}"
        return style.plain(text) + "\n"
    data = output.get("data") or {}
    if "text/plain" in data:
        return _line(_joined(data["text/plain"]))
    kinds = ", ".join(sorted(data)) or "empty output"
    return style.paint(f"[{kinds}]", DIM) + "\n"


class OutputFollower:
    """Turns successive states of one cell's outputs into the text still to print."""

    def __init__(self, style: Style) -> None:
        self._style = style
        self._printed = ""
        self._open = ""

    def update(self, outputs: list[dict[str, Any]]) -> str:
        """The text to write now for the cell's outputs as they are."""
        text = "".join(output_text(output, self._style) for output in outputs)
        if not text.startswith(self._printed):
            # The outputs were cleared or rewritten (a clear_output): start over.
            self._printed = ""
        new = text[len(self._printed) :]
        cut = new.rfind("\n") + 1
        finished, open_line = new[:cut], new[cut:]
        self._printed += finished
        if not self._style.tty:
            written = finished
        elif not finished and open_line == self._open:
            written = ""
        else:  # redraw the open line in place
            written = ("\r\x1b[K" if self._open else "") + finished + open_line
        self._open = open_line
        return written

    def finish(self) -> str:
        """The cell ended: print its open line (piped) or end it (terminal)."""
        if not self._open:
            return ""
        line, self._open = self._open, ""
        self._printed += line
        return "\n" if self._style.tty else line + "\n"


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _line(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
