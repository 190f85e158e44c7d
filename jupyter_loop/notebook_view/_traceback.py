"""Tracebacks as a model needs them: ``ename: evalue`` and the frames in user cells (pure).

IPython 8/9 name a user frame ``Cell In[3], line 2``; IPython 8.0–8.2 said ``Input In [3]``;
older kernels ``/tmp/ipykernel_1234/567.py`` or ``<ipython-input-3-…>``. Library frames
(``File /…/site-packages/…``) are collapsed to a count; chained-exception lines are kept.

Example:
    >>> error = {"output_type": "error", "ename": "ZeroDivisionError",
    ...          "evalue": "division by zero", "traceback": [
    ...     "\\x1b[31mZeroDivisionError\\x1b[39m      Traceback (most recent call last)",
    ...     "\\x1b[36mCell In[1], line 2\\x1b[39m\\n      1 x = 1\\n----> 2 x / 0\\n",
    ...     "\\x1b[36mFile /usr/lib/python3/lib.py:10\\x1b[39m, in f()\\n---> 10 return 1/0\\n",
    ...     "\\x1b[31mZeroDivisionError\\x1b[39m: division by zero"]}
    >>> print(summarize_traceback(error, 500))
    ZeroDivisionError: division by zero
    Cell In[1], line 2
          1 x = 1
    ----> 2 x / 0
    [1 library frame]
"""

from __future__ import annotations

import re
from typing import Any

from jupyter_loop.execution.outputs.terminal import strip_ansi
from jupyter_loop.notebook_view._excerpt import head_tail

HEADLINE_CHARS = 120
FRAME_LINES_BEFORE_ARROW = 2
_MAX_ENTRIES = 400  # a RecursionError can bring thousands; IPython already folds repeats
_USER_FRAME = re.compile(
    r"\s*(?:Cell In\s*\[|Input In\s*\[|(?:File\s+)?<ipython-input-"
    r"|(?:File\s+)?\S*ipykernel_\d+[/\\]\d+\.py)"
)
_LIBRARY_FRAME = re.compile(r"\s*(?:File\s+\S|\S+\.py(?::\d+)?,?\s+in\s|<frozen\s)")
_SEPARATOR = re.compile(r"\s*-{10,}\s*")
_HEADER = re.compile(r"\s*\w[\w.]*\s+Traceback \(most recent call last\)\s*")
_ARROW = re.compile(r"\s*-+>")


def error_headline(output: dict[str, Any]) -> str:
    """``ename: evalue`` on one line, capped.

    Example:
        >>> error_headline({"ename": "KeyError", "evalue": "'a'\\nmore"})
        "KeyError: 'a'"
    """
    ename = strip_ansi(str(output.get("ename", "Error")))
    evalue = strip_ansi(str(output.get("evalue", ""))[: HEADLINE_CHARS * 2]).strip()
    line = f"{ename}: {evalue.splitlines()[0]}" if evalue else ename
    return line if len(line) <= HEADLINE_CHARS else line[: HEADLINE_CHARS - 1] + "…"


def summarize_traceback(output: dict[str, Any], budget_chars: int) -> str:
    """An error output as its headline plus user frames, within ``budget_chars``."""
    headline = error_headline(output)
    entries = [str(entry) for entry in output.get("traceback") or []]
    if len(entries) > _MAX_ENTRIES:
        half = _MAX_ENTRIES // 2
        entries = entries[:half] + entries[-half:]
    lines = [headline]
    library = 0
    classified = False
    for entry in entries:
        first = strip_ansi(entry[:400]).split("\n", 1)[0]
        if _USER_FRAME.match(first):
            lines.extend(_flush(library))
            library = 0
            lines.extend(_user_frame(entry))
            classified = True
        elif _LIBRARY_FRAME.match(first):
            library += 1
            classified = True
        elif _SEPARATOR.fullmatch(first) or _HEADER.fullmatch(first):
            continue
        else:
            other = [line for line in _lines(entry) if line.strip()]
            lines.extend(line for line in other[:6] if line.strip() != headline)
    lines.extend(_flush(library))
    if not classified and len(lines) > 14:  # a plain traceback (not IPython's): keep its end
        lines = [headline, *lines[-12:]]
    return head_tail("\n".join(lines), budget_chars).text


def _user_frame(entry: str) -> list[str]:
    lines = _lines(entry[:4000])
    header, body = lines[0].strip(), lines[1:]
    arrow = next((i for i, line in enumerate(body) if _ARROW.match(line)), None)
    if arrow is None:
        return [header, *body[:4]]
    return [header, *body[max(0, arrow - FRAME_LINES_BEFORE_ARROW) : arrow + 1]]


def _lines(entry: str) -> list[str]:
    return [line.rstrip() for line in strip_ansi(entry).strip("\n").split("\n")]


def _flush(library: int) -> list[str]:
    if not library:
        return []
    return [f"[{library} library frame{'s' if library > 1 else ''}]"]
