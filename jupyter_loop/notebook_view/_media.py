"""Images and tables in outputs, described for a model (pure).

Image sizes come from the PNG / GIF / JPEG header inside the base64 payload (only its first
kilobytes are decoded) or from an SVG's ``width``/``height``/``viewBox``; tables come from the
first rows of pandas-style HTML (only the part holding them is parsed) with the shape from
pandas' ``<p>N rows × M columns</p>`` footer when there is one.

Example:
    >>> png = ("iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAC0lEQVR4nGNgwAQAABQAAX3+"
    ...        "Hu4AAAAASUVORK5CYII=")
    >>> image_placeholder("image/png", png, {})
    '[image/png 3×2, 68 B]'
    >>> html = ("<table><thead><tr><th></th><th>a</th></tr></thead><tbody>"
    ...         "<tr><th>0</th><td>1</td></tr></tbody></table><p>1 rows × 1 columns</p>")
    >>> print(summarize_html_table(html, 500))
    table 1 rows × 1 columns
       a
    0  1
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from jupyter_loop.execution.outputs.terminal import strip_ansi
from jupyter_loop.notebook_view._excerpt import head_tail

MAX_TABLE_ROWS = 15
MAX_TABLE_COLS = 10
MAX_CELL_CHARS = 24
_JPEG_SCAN_CHARS = 87_384  # base64 of 64 KiB: where a JPEG's size marker almost always is
_PANDAS_SHAPE = re.compile(r"<p>\s*([\d,]+) rows × ([\d,]+) columns\s*</p>")
_PANDAS_PLAIN_SHAPE = re.compile(r"\[([\d,]+) rows x ([\d,]+) columns\]")
_SVG_TAG = re.compile(r"<svg\b[^>]*>", re.I | re.S)
_SVG_ATTR = re.compile(r'\b(width|height|viewBox)\s*=\s*["\']([^"\']*)["\']', re.I)
_SCRIPT = re.compile(r"<script\b", re.I)
_JPEG_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE})


@dataclass(frozen=True)
class ImageAttachment:
    """An image to attach to a model message."""

    mime: str
    base64: str


def image_placeholder(mime: str, payload: str, metadata: dict[str, Any]) -> str:
    """``[image/png 640×480, 12.3 KB]``: type, pixel size if known, and byte size."""
    if mime == "image/svg+xml":
        size = _svg_size(payload)
        nbytes = len(payload)
    else:
        size = _raster_size(mime, payload)
        nbytes = _base64_bytes(payload)
    if size is None and isinstance(metadata.get("width"), int | float):
        size = (int(metadata["width"]), int(metadata.get("height") or 0))
    dims = f" {size[0]}×{size[1]}" if size and size[1] else (f" {size[0]} wide" if size else "")
    return f"[{mime}{dims}, {human_size(nbytes)}]"


def is_script_html(html: str) -> bool:
    """Whether HTML carries a script (its text would mean nothing to a model)."""
    return _SCRIPT.search(html, 0, 65_536) is not None or _SCRIPT.search(html[-4096:]) is not None


def table_shape(html: str) -> str:
    """``100 rows × 3 columns`` from a pandas footer, or ``""`` (reads the last 300 chars)."""
    found = _PANDAS_SHAPE.search(html[-300:])
    return f"{found[1]} rows × {found[2]} columns" if found else ""


def summarize_html_table(html: str, budget_chars: int) -> str:
    """The first table in ``html`` as a capped text table under a ``table …`` line."""
    parser = _TableParser()
    parser.feed(html[: _rows_end(html, MAX_TABLE_ROWS + 4)])
    header_rows = parser.header_rows
    rows = parser.rows
    shape = table_shape(html)
    if not shape:
        body_rows = html.count("<tr", 0, 2_000_000) - header_rows
        width = max((len(row) for row in rows), default=0)
        shape = f"{body_rows} rows, {width} cells wide"
    shown = rows[: header_rows + MAX_TABLE_ROWS]
    more = " (first rows shown)" if len(rows) > len(shown) or "</table>" not in html[-400:] else ""
    text = f"table {shape}{more}\n{render_table(shown)}"
    return head_tail(text, budget_chars).text


def summarize_plain_table(text: str, budget_chars: int) -> str | None:
    """A plain-text table (pandas repr and the like) capped to its first rows, else ``None``."""
    head = strip_ansi(text[: 200 * (MAX_TABLE_ROWS + 4)])
    lines = [line.rstrip() for line in head.split("\n")]
    footer = _PANDAS_PLAIN_SHAPE.search(text[-200:])
    if footer is None and not _looks_tabular(lines):
        return None
    if footer is not None:
        shape = f"{footer[1]} rows × {footer[2]} columns"
    else:
        shape = f"{text.count(chr(10), 0, 2_000_000)} lines"
    shown = [_cap(line, 160) for line in lines[: MAX_TABLE_ROWS + 1] if line]
    more = " (first rows shown)" if len(text) > len(head) or len(lines) > len(shown) + 1 else ""
    return head_tail(f"table {shape}{more}\n" + "\n".join(shown), budget_chars).text


def render_table(rows: list[list[str]]) -> str:
    """Rows as aligned columns, at most :data:`MAX_TABLE_COLS` of them and capped cells.

    Example:
        >>> print(render_table([["", "a", "bb"], ["0", "1", "2"]]))
           a  bb
        0  1   2
    """
    cut = [
        [_cap(cell, MAX_CELL_CHARS) for cell in row[:MAX_TABLE_COLS]]
        + (["…"] if len(row) > MAX_TABLE_COLS else [])
        for row in rows
    ]
    count = max((len(row) for row in cut), default=0)
    widths = [max((len(row[i]) for row in cut if i < len(row)), default=0) for i in range(count)]
    lines = []
    for row in cut:
        cells = [
            cell.rjust(widths[i]) if i else cell.ljust(widths[i]) for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


class _TableParser(HTMLParser):
    """Collects the cell texts of the first ``<table>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.header_rows = 0
        self._depth = 0
        self._done = False
        self._in_head = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._done:
            return
        if tag == "table":
            self._depth += 1
        elif self._depth == 1 and tag == "thead":
            self._in_head = True
        elif self._depth == 1 and tag == "tr":
            self.rows.append([])
            self.header_rows += self._in_head
        elif self._depth == 1 and tag in ("td", "th") and self.rows:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._done:
            return
        if tag == "table":
            self._depth -= 1
            self._done = self._depth == 0
        elif tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _rows_end(html: str, rows: int) -> int:
    """Where the ``rows``-th ``</tr>`` ends (or a cap), so the parser reads no further."""
    position = 0
    for _ in range(rows):
        found = html.find("</tr>", position, position + 200_000)
        if found < 0:
            return min(len(html), position + 200_000)
        position = found + 5
    return position


def _looks_tabular(lines: list[str]) -> bool:
    sample = [line for line in lines[:8] if line.strip()]
    if len(sample) < 3:
        return False
    fields = [len(line.split()) for line in sample]
    aligned = sum("  " in line.strip() for line in sample) >= len(sample) - 1
    return aligned and min(fields) >= 2 and max(fields) - min(fields) <= 1


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _base64_bytes(payload: str) -> int:
    length = len(payload) - payload.count("\n") - payload.count(" ")
    return max(0, length * 3 // 4 - payload[-4:].count("="))


def _decode_head(payload: str, chars: int) -> bytes:
    head = "".join(payload[:chars].split())
    head = head[: len(head) // 4 * 4]
    try:
        return base64.b64decode(head)
    except (binascii.Error, ValueError):
        return b""


def _raster_size(mime: str, payload: str) -> tuple[int, int] | None:
    if mime == "image/png":
        data = _decode_head(payload, 64)
        if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
    elif mime == "image/gif":
        data = _decode_head(payload, 16)
        if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
    elif mime == "image/jpeg":
        return _jpeg_size(_decode_head(payload, _JPEG_SCAN_CHARS))
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    if data[:2] != b"\xff\xd8":
        return None
    position = 2
    while position + 9 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return int(width), int(height)
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        position += 2 + length
    return None


def _svg_size(svg: str) -> tuple[int, int] | None:
    tag = _SVG_TAG.search(svg, 0, 8192)
    if tag is None:
        return None
    attrs = {name.lower(): value for name, value in _SVG_ATTR.findall(tag.group())}
    width, height = _svg_length(attrs.get("width")), _svg_length(attrs.get("height"))
    if width and height:
        return width, height
    box = (attrs.get("viewbox") or "").replace(",", " ").split()
    if len(box) == 4:
        try:
            return round(float(box[2])), round(float(box[3]))
        except ValueError:
            return None
    return None


def _svg_length(value: str | None) -> int | None:
    found = re.match(r"\s*(\d+(?:\.\d*)?)\s*(px|pt)?\s*$", value or "")
    return round(float(found[1]) * (4 / 3 if found[2] == "pt" else 1)) if found else None


def human_size(size: int) -> str:
    """``512 B``, ``1.2 KB``, ``3.4 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
