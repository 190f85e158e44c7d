"""What the terminal client prints of a cell's outputs as they grow (pure, no I/O).

The shared document already holds stream text as a terminal renders it (``\\r`` applied by
:class:`~jupyter_loop.execution.outputs.terminal.TerminalScreen` on the server), so following a cell
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

Everything the client prints that it did not write itself (sources, outputs, the model's
text, tool summaries, paths, names) goes through :func:`visible` first: a terminal obeys
control characters, so a cell could hide what an approval shows, or model text could set
the clipboard (OSC 52) or the window's title. Only our own colours reach the terminal raw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

RED, DIM, BOLD, GREEN, YELLOW, RESET = "31", "2", "1", "32", "33", "0"
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
"""SGR: colours and bold, which change how text looks and nothing else."""
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and
isolates (which reorder what a terminal shows, as the "Trojan Source" attack does)."""


def visible(text: str, colours: bool = False) -> str:
    """``text`` safe to write to a terminal: each control character shown as a symbol.

    C0 controls become their Unicode control pictures (ESC is ``␛``, CR ``␍``, BEL ``␇``),
    DEL ``␡``, C1 controls ``\\x9b``, bidirectional controls ``<U+202E>``. Tab and newline
    stay. ``colours``: keep colour sequences (SGR), the one kind of escape sequence that
    can only change how text looks; on a terminal, outputs keep their colours.

    Showing them, rather than dropping them, lets a person see that something was there.

    Example:
        >>> visible("rm -rf ~ #\\x1b[2K\\rprint('hi')\\x1b]52;c;eA==\\x07\\x9b2J\\u202e")
        "rm -rf ~ #␛[2K␍print('hi')␛]52;c;eA==␇\\\\x9b2J<U+202E>"
        >>> visible("\\x1b[31mred\\x1b[0m\\x1b[2J", colours=True)
        '\\x1b[31mred\\x1b[0m␛[2J'
    """
    if not colours:
        return _CONTROL.sub(_symbol, text)
    kept = _COLOUR.findall(text)
    pieces = [_CONTROL.sub(_symbol, piece) for piece in _COLOUR.split(text)]
    return "".join(piece + colour for piece, colour in zip(pieces, [*kept, ""], strict=True))


def _symbol(found: re.Match[str]) -> str:
    code = ord(found[0])
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


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
        """Text from elsewhere (an output) made :func:`visible`: its colours kept on a
        terminal, removed when piped.

        Example:
            >>> Style(tty=False).plain("\\x1b[31mKeyError\\x1b[0m\\x1b]0;t\\x07")
            'KeyError␛]0;t␇'
        """
        return visible(text, colours=True) if self.tty else visible(_COLOUR.sub("", text))


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
        text = style.plain(_joined(output.get("text", "")))
        return style.paint(text, RED) if output.get("name") == "stderr" else text
    if kind == "error":
        lines = [str(line) for line in output.get("traceback") or []]
        text = "\n".join(lines) or f"{output.get('ename')}: {output.get('evalue')}"
        return style.plain(text) + "\n"
    data = output.get("data") or {}
    if "text/plain" in data:
        return _line(style.plain(_joined(data["text/plain"])))
    kinds = visible(", ".join(sorted(data)) or "empty output")
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
