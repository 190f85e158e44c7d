"""How much of a cell's output the shared document keeps, and what stands in for the rest.

Pure functions and values, no I/O. Sizes are counted as the ``.ipynb`` stores outputs
(:func:`text_size`: UTF-8 bytes and :data:`LINE_COST` per line). A cell's outputs are kept
within ``total`` bytes:

* the **head**: outputs from the start of the run, up to ``head`` bytes (a stream is cut
  after a whole line);
* a **marker** output saying what was left out, with a link to the full output;
* the **tail**: the most recent outputs, at most ``tail_max`` bytes; when it grows past
  that, its oldest part is dropped down to ``tail_keep`` bytes (so the tail is rewritten
  once per ``tail_max - tail_keep`` bytes of output, not on every write).

A single rich output larger than ``rich_limit`` is replaced by a *placeholder* that keeps
a short ``text/plain`` preview and links to the full payload.

Example:
    >>> budget = OutputBudget.from_total(256 * 1024)
    >>> (budget.head, budget.tail_max, budget.tail_keep)
    (129024, 129024, 64512)
    >>> human_bytes(30 * 1024 * 1024)
    '30.0 MB'
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any

KIB = 1024
MIN_TOTAL = 16 * KIB
"""The smallest per-cell budget: room for a useful head, tail and marker."""

MARKER_RESERVE = 2 * KIB
"""Bytes set aside for the marker (and rounding) in :meth:`OutputBudget.from_total`."""

PREVIEW_CHARS = 200
"""How much of a replaced output's ``text/plain`` its placeholder shows."""

METADATA_KEY = "jupyter_loop"
"""Output metadata key under which markers and placeholders describe what they replace."""

RICH_KINDS = ("display_data", "execute_result")

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class OutputBudget:
    """Byte limits for one cell's outputs in the shared document (see the module doc)."""

    head: int
    tail_max: int
    tail_keep: int

    @classmethod
    def from_total(cls, total: int) -> OutputBudget:
        """Split ``total`` bytes (at least :data:`MIN_TOTAL`) into head and tail."""
        half = max(total, MIN_TOTAL) // 2 - MARKER_RESERVE
        return cls(head=half, tail_max=half, tail_keep=half // 2)

    @property
    def rich_limit(self) -> int:
        """A rich output larger than this is always replaced by a placeholder."""
        return self.tail_max


@dataclass
class Omitted:
    """What the document left out of a run's output so far."""

    lines: int = 0
    bytes: int = 0
    outputs: int = 0

    def add_text(self, text: str) -> None:
        self.lines += text.count("\n")
        self.bytes += text_bytes(text)

    def add_output(self, size: int) -> None:
        self.outputs += 1
        self.bytes += size

    def describe(self) -> str:
        parts = []
        if self.lines:
            parts.append(_count(self.lines, "line"))
        if self.outputs:
            parts.append(_count(self.outputs, "output"))
        what = " and ".join(parts) or "output"
        return f"{what} ({human_bytes(self.bytes)})"


# -- sizes and clean text -----------------------------------------------------------------

LINE_COST = 11
"""Bytes the ``.ipynb`` spends around each line of text: nbformat stores multi-line text as
a list of indented, quoted lines (``      "42\\n",``)."""


def text_bytes(text: str) -> int:
    """UTF-8 size of ``text`` (what pycrdt counts)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def text_size(text: str) -> int:
    """What ``text`` costs in the ``.ipynb``: its UTF-8 bytes and :data:`LINE_COST` a line."""
    return text_bytes(text) + LINE_COST * text.count("\n")


def value_size(value: Any) -> int:
    """Approximate ``.ipynb`` size of an output value (strings dominate; keys are ignored)."""
    if isinstance(value, str):
        return text_size(value)
    if isinstance(value, dict):
        return sum(value_size(item) for item in value.values())
    if isinstance(value, list | tuple):
        return sum(value_size(item) for item in value)
    return 8


def clean_text(text: str) -> str:
    """``text`` without lone surrogates (a Y document, like UTF-8, cannot hold them)."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def clean_value(value: Any) -> Any:
    """A JSON-like value with every string made safe by :func:`clean_text`."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(key)): clean_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(item) for item in value]
    return value


def human_bytes(size: int) -> str:
    """``size`` for people: ``"812 bytes"``, ``"1.2 MB"``."""
    if size < KIB:
        return f"{size} bytes"
    value = size / KIB
    for unit in ("KB", "MB"):
        if value < KIB:
            return f"{value:.1f} {unit}"
        value /= KIB
    return f"{value:.1f} GB"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


# -- cutting stream text ------------------------------------------------------------------


def head_cut(text: str, limit: int) -> int:
    """Length of the longest prefix of ``text`` that ends a line and costs at most ``limit``
    (see :func:`text_size`)."""
    return text.rfind("\n", 0, _within(text, limit)) + 1


def front_cut(text: str, excess: int) -> int:
    """Where to start keeping ``text`` so that what goes costs at least ``excess``: at the
    next line start when that leaves something and skips little (at most 1 KB or half of
    what an exact cut keeps), otherwise exactly there."""
    if excess <= 0:
        return 0
    position = min(_within(text, excess - 1) + 1, len(text))
    line_start = text.find("\n", max(position - 1, 0)) + 1
    if 0 < line_start < len(text):
        skipped = text_size(text[position:line_start])
        if skipped <= max(1024, text_size(text[position:]) // 2):
            return line_start
    return position


def _within(text: str, limit: int) -> int:
    """The longest prefix length of ``text`` whose :func:`text_size` is at most ``limit``."""
    if limit <= 0:
        return 0
    high = len(text[:limit]) if text.isascii() else len(_prefix_within(text, limit))
    if text_size(text[:high]) <= limit:
        return high
    low = 0  # text_size(text[:low]) <= limit < text_size(text[:high])
    while high - low > 1:
        middle = (low + high) // 2
        if text_size(text[:middle]) <= limit:
            low = middle
        else:
            high = middle
    return low


def _prefix_within(text: str, limit: int) -> str:
    return text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")


# -- what stands in for omitted output ----------------------------------------------------


def with_fallback_text(output: dict[str, Any]) -> dict[str, Any]:
    """A rich output that shows *something* everywhere: a ``text/plain`` line is added when
    the bundle has none (a MIME type no renderer knows would otherwise show nothing)."""
    data = output.get("data")
    if output.get("output_type") not in RICH_KINDS or not isinstance(data, dict) or not data:
        return output
    if "text/plain" in data:
        return output
    kinds = ", ".join(sorted(data))
    described = f"<{kinds} output, {human_bytes(value_size(data))}>"
    return {**output, "data": {**data, "text/plain": described}}


def marker_output(omitted: Omitted, url: str | None, budget: OutputBudget) -> dict[str, Any]:
    """The output between a run's head and tail, saying what is left out and where it is."""
    if omitted.bytes:
        what = f"{omitted.describe()} omitted here"
    else:
        what = (
            f"output longer than this cell keeps: the notebook holds its first "
            f"{human_bytes(budget.head)} and its last {human_bytes(budget.tail_max)}"
        )
    if url:
        plain = f"⋯ {what}; the full output is kept on the server: {url} ⋯\n"
        link = f' — <a href="{html.escape(url)}" target="_blank">open the full output</a>'
    else:
        plain, link = f"⋯ {what} (not kept) ⋯\n", ""
    return {
        "output_type": "display_data",
        "data": {
            "text/plain": plain,
            "text/html": f"<div><code>⋯ {html.escape(what)} ⋯</code>{link}</div>",
        },
        "metadata": {
            METADATA_KEY: {
                "omitted": {
                    "lines": omitted.lines,
                    "bytes": omitted.bytes,
                    "outputs": omitted.outputs,
                },
                "full_output": url,
            }
        },
    }


def placeholder_output(
    output: dict[str, Any], size: int, url: str | None, *, preview: bool = True
) -> dict[str, Any]:
    """A small stand-in for a rich or error output of ``size`` bytes; ``preview`` keeps the
    start of its ``text/plain`` (at most :data:`PREVIEW_CHARS`)."""
    if output.get("output_type") == "error":
        return _placeholder_error(output, size, url)
    found = output.get("data")
    data: dict[str, Any] = found if isinstance(found, dict) else {}
    kinds = sorted(data) or ["empty"]
    where = f"full output on the server: {url}" if url else "not kept"
    note = f"[{', '.join(kinds)} output of {human_bytes(size)} not kept in the notebook; {where}]"
    text = _preview(data.get("text/plain")) if preview else ""
    plain = f"{text}\n{note}" if text else note
    shown = f"<pre>{html.escape(text)}</pre>" if text else ""
    link = f' — <a href="{html.escape(url)}" target="_blank">open it</a>' if url else ""
    kept_html = (
        f"{shown}<div><code>{html.escape(', '.join(kinds))} output of {human_bytes(size)} "
        f"not kept in the notebook</code>{link}</div>"
    )
    placeholder = {
        "output_type": output.get("output_type", "display_data"),
        "data": {"text/plain": plain, "text/html": kept_html},
        "metadata": {
            METADATA_KEY: {"omitted": {"mime_types": kinds, "bytes": size}, "full_output": url}
        },
    }
    if "execution_count" in output:
        placeholder["execution_count"] = output["execution_count"]
    return placeholder


def _placeholder_error(output: dict[str, Any], size: int, url: str | None) -> dict[str, Any]:
    lines = [str(line) for line in output.get("traceback", [])]
    keep_each = 10
    where = f"full error on the server: {url}" if url else "not kept"
    if len(lines) > 2 * keep_each:
        middle = f"[{len(lines) - 2 * keep_each:,} traceback lines omitted; {where}]"
        lines = [*lines[:keep_each], middle, *lines[-keep_each:]]
    lines = [_preview(line) for line in lines]
    lines.append(f"[error output of {human_bytes(size)} shortened; {where}]")
    return {
        "output_type": "error",
        "ename": _preview(str(output.get("ename", ""))),
        "evalue": _preview(str(output.get("evalue", ""))),
        "traceback": lines,
    }


def _preview(value: Any) -> str:
    if isinstance(value, list):
        value = "".join(str(part) for part in value)
    if not isinstance(value, str):
        return ""
    return value if len(value) <= PREVIEW_CHARS else value[:PREVIEW_CHARS] + "…"


def dumps(output: dict[str, Any]) -> bytes:
    """An output as compact UTF-8 JSON (what the output store keeps)."""
    return json.dumps(output, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )
