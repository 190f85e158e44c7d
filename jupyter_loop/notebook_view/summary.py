"""Cell outputs summarised for a language model (pure functions over nbformat v4 outputs).

Text is cleaned (ANSI escapes stripped, ``\\r`` progress lines collapsed) and cut to a budget as
head + tail with an offset to page on; tracebacks keep ``ename: evalue`` and the frames in user
cells; dataframes become capped text tables with their shape; images, widgets and scripts become
typed placeholders (images are handed back for attaching when the model takes them). Only as much
of an output as the budget needs is ever read, so a 100 MB stream costs what its excerpt costs.

Example:
    >>> outputs = [
    ...     {"output_type": "stream", "name": "stdout", "text": "step 1\\nstep 2\\n"},
    ...     {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
    ...      "traceback": ["\\x1b[31mZeroDivisionError\\x1b[39m: division by zero"]},
    ... ]
    >>> summary = summarize_outputs(outputs, 1000)
    >>> summary.headline
    'ZeroDivisionError: division by zero'
    >>> print(summary.text)
    [0] stdout
    step 1
    step 2
    [1] error
    ZeroDivisionError: division by zero
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jupyter_loop.execution.outputs.terminal import strip_ansi
from jupyter_loop.notebook_view._excerpt import (
    Excerpt,
    clean_text,
    collapse_carriage_returns,
    head_tail,
    share_budget,
)
from jupyter_loop.notebook_view._media import (
    ImageAttachment,
    human_size,
    image_placeholder,
    is_script_html,
    summarize_html_table,
    summarize_plain_table,
    table_shape,
)
from jupyter_loop.notebook_view._traceback import error_headline, summarize_traceback

__all__ = [
    "Excerpt",
    "ImageAttachment",
    "OutputsSummary",
    "clean_text",
    "collapse_carriage_returns",
    "head_tail",
    "headline",
    "share_budget",
    "strip_ansi",
    "summarize_output",
    "summarize_outputs",
    "summarize_traceback",
]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml")
ATTACHABLE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_OUTPUTS_SHOWN = 30
"""More outputs than this: the first 10 and the last 20 are shown (errors always are)."""
_LINE_COUNT_LIMIT = 65_536  # longer streams are described by size: counting lines costs a scan
_UNINFORMATIVE_REPR = re.compile(r"<[\w.]+ object(?: at 0x[0-9a-f]+)?>|<Figure size [^>]*>")


@dataclass(frozen=True)
class OutputsSummary:
    """A cell's outputs as a model should see them.

    Attributes:
        text: The outputs, each under an ``[index] kind`` header, within the budget.
        images: Images to attach (only when the model takes images).
        truncated: Whether anything was cut (see the ``offset=`` markers in ``text``).
        headline: One line for the notebook map, e.g. ``stdout 3 lines, 1 image``.
    """

    text: str
    images: tuple[ImageAttachment, ...] = ()
    truncated: bool = False
    headline: str = ""


def summarize_outputs(
    outputs: Sequence[dict[str, Any]],
    budget_chars: int,
    *,
    model_takes_images: bool = False,
    max_images: int = 4,
) -> OutputsSummary:
    """Summarise a cell's outputs within ``budget_chars`` characters.

    Small outputs keep all they need; the rest of the budget is shared equally by the large
    ones. Offsets in ``offset=`` markers count characters of that output's raw text.

    Example:
        >>> summarize_outputs([], 100)
        OutputsSummary(text='', images=(), truncated=False, headline='')
    """
    shown = _shown_indexes(outputs)
    omitted = len(outputs) - len(shown)
    headers = [f"[{index}] {_kind(outputs[index])}" for index in shown]
    note = f"[{omitted} more outputs omitted; read them by index]" if omitted else ""
    fixed = sum(len(header) + 1 for header in headers) + len(note) + 1
    images: list[ImageAttachment] = []
    bodies: list[str | None] = []
    sizes: list[int] = []
    for index in shown:
        output = outputs[index]
        if output.get("output_type") == "stream":
            bodies.append(None)  # cut lazily from the raw text once its share is known
            sizes.append(len(_text(output.get("text", ""))))
            continue
        attach = model_takes_images and len(images) < max_images
        body, image = summarize_output(output, budget_chars, attach_images=attach)
        if image is not None:
            images.append(image)
            body = f"{body[:-1]}, attached as image {len(images)}]"
        bodies.append(body)
        sizes.append(len(body))
    shares = share_budget(sizes, max(0, budget_chars - fixed))
    parts: list[str] = []
    truncated = omitted > 0
    for position, index in enumerate(shown):
        known = bodies[position]
        if known is None:
            excerpt = head_tail(_text(outputs[index].get("text", "")), shares[position], clean=True)
        else:
            excerpt = head_tail(known, shares[position])
        truncated = truncated or excerpt.truncated
        parts.append(headers[position])
        if excerpt.text:
            parts.append(excerpt.text.rstrip("\n"))
    if note:
        parts.append(note)
    return OutputsSummary("\n".join(parts), tuple(images), truncated, headline(outputs))


def summarize_output(
    output: dict[str, Any], budget_chars: int, *, attach_images: bool = False
) -> tuple[str, ImageAttachment | None]:
    """One output as text within ``budget_chars``, and its image when ``attach_images``.

    Example:
        >>> summarize_output({"output_type": "execute_result", "data": {"text/plain": "42"},
        ...                   "metadata": {}, "execution_count": 1}, 100)
        ('42', None)
    """
    kind = output.get("output_type")
    if kind == "stream":
        return head_tail(_text(output.get("text", "")), budget_chars, clean=True).text, None
    if kind == "error":
        return summarize_traceback(output, budget_chars), None
    data = output.get("data") or {}
    metadata = output.get("metadata") or {}
    if WIDGET_MIME in data:
        return _widget_placeholder(data), None
    for mime in IMAGE_MIMES:
        if mime in data:
            payload = _text(data[mime])
            text = image_placeholder(mime, payload, metadata.get(mime) or {})
            attach = attach_images and mime in ATTACHABLE_MIMES
            return text, ImageAttachment(mime, "".join(payload.split())) if attach else None
    return _bundle_text(data, budget_chars), None


def headline(outputs: Sequence[dict[str, Any]]) -> str:
    """One cheap line describing outputs: the error if any, else what kinds there are.

    Never reads more than a few kilobytes of any output.

    Example:
        >>> headline([{"output_type": "stream", "name": "stdout", "text": "a\\nb\\nc\\n"},
        ...           {"output_type": "display_data", "data": {"image/png": "iVBO"}}])
        'stdout 3 lines, 1 image'
    """
    for output in outputs:
        if output.get("output_type") == "error":
            return error_headline(output)
    streams: dict[str, list[Any]] = {}
    counts: dict[str, int] = {}
    result = ""
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            streams.setdefault(str(output.get("name", "stdout")), []).append(output.get("text", ""))
            continue
        label = _bundle_label(output.get("data") or {})
        if label.startswith("result: "):
            if kind == "execute_result":
                result = label
                continue
            label = "display"
        counts[label] = counts.get(label, 0) + 1
    parts = [_stream_label(name, texts) for name, texts in streams.items()]
    for label, count in counts.items():
        parts.append(label if label.startswith("table") else f"{count} {label}{'s' * (count > 1)}")
    if result:
        parts.append(result)
    return ", ".join(parts)


# -- helpers -----------------------------------------------------------------------------


def _text(value: Any) -> str:
    """nbformat multiline strings may be lists of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(item) for item in value)
    return str(value)


def _kind(output: dict[str, Any]) -> str:
    kind = str(output.get("output_type", "output"))
    if kind == "stream":
        return str(output.get("name", "stdout"))
    return {"execute_result": "result", "display_data": "display"}.get(kind, kind)


def _shown_indexes(outputs: Sequence[dict[str, Any]]) -> list[int]:
    count = len(outputs)
    if count <= MAX_OUTPUTS_SHOWN:
        return list(range(count))
    keep = set(range(10)) | set(range(count - 20, count))
    keep |= {i for i, output in enumerate(outputs) if output.get("output_type") == "error"}
    return sorted(keep)[: MAX_OUTPUTS_SHOWN + 5]


def _widget_placeholder(data: dict[str, Any]) -> str:
    view = data.get(WIDGET_MIME) or {}
    model_id = str(view.get("model_id", "")) if isinstance(view, dict) else ""
    plain = _text(data.get("text/plain", ""))[:200]
    name = re.split(r"[(\s]", plain.strip(), maxsplit=1)[0] if plain.strip() else ""
    model = f"model {model_id[:8]}…" if model_id else "model ?"
    return f"[widget: {name} {model}]" if name else f"[widget: {model}]"


def _bundle_text(data: dict[str, Any], budget_chars: int) -> str:
    html = _text(data.get("text/html", ""))
    if html and "<table" in html[:4096] and not is_script_html(html):
        return summarize_html_table(html, budget_chars)
    for mime in ("text/markdown", "text/plain", "text/latex"):
        if mime not in data:
            continue
        text = _text(data[mime])
        if mime == "text/plain" and html and _UNINFORMATIVE_REPR.fullmatch(text.strip()):
            break
        table = summarize_plain_table(text, budget_chars) if mime == "text/plain" else None
        return table or head_tail(text, budget_chars, clean=True).text
    if "application/json" in data:
        return head_tail(repr(data["application/json"])[: budget_chars * 2], budget_chars).text
    if html:
        if is_script_html(html):
            return "[script output omitted]"
        return head_tail(_strip_tags(html[: budget_chars * 4]), budget_chars).text
    if "application/javascript" in data:
        return "[script output omitted]"
    if not data:
        return "[empty output]"
    mime = next(iter(data))
    value = data[mime]
    size = f", {human_size(len(value))}" if isinstance(value, str) else ""
    return f"[{mime} output{size}]"


def _strip_tags(html: str) -> str:
    from html import unescape

    text = re.sub(r"<(script|style)\b.*?</\1>|<[^>]*>", " ", html, flags=re.S | re.I)
    return re.sub(r"[ \t]+", " ", unescape(text)).strip()


def _bundle_label(data: dict[str, Any]) -> str:
    """What a bundle is, for the headline (cheap: looks at a few kilobytes at most)."""
    if WIDGET_MIME in data:
        return "widget"
    if any(mime in data for mime in IMAGE_MIMES):
        return "image"
    html = _text(data.get("text/html", ""))
    if html and "<table" in html[:4096]:
        shape = table_shape(html)
        return f"table {shape}" if shape else "table"
    plain = data.get("text/plain")
    if plain is not None:
        line = strip_ansi(_text(plain)[:200]).strip().split("\n", 1)[0]
        return f"result: {line[:40]}{'…' if len(line) > 40 else ''}"
    if "application/javascript" in data or (html and is_script_html(html)):
        return "script"
    return "output"


def _stream_label(name: str, texts: list[Any]) -> str:
    size = sum(len(text) if isinstance(text, str) else len(_text(text)) for text in texts)
    if size > _LINE_COUNT_LIMIT:
        return f"{name} {human_size(size)}"
    joined = "".join(_text(text) for text in texts)
    lines = joined.count("\n") + (0 if joined.endswith("\n") or not joined else 1)
    return f"{name} {lines} line{'s' if lines != 1 else ''}"
