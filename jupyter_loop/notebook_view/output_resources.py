"""A cell's outputs as resources an outside agent fetches when it wants them.

A tool result names a cell's images, and its outputs too long to send inline, as links,
each with a short caption (type, size, shape), so a client is never flooded and still
knows what there is; reading a link gives that one output whole: its text (masked whole
before it left the notebook, as every output an agent reads) or its image's bytes.

Stance: a link names the run whose outputs the cell showed (``run``; ``"file"`` for
outputs that came with the file). Read after the cell ran again, it fails plainly rather
than answering with another run's output under the same name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..execution.terminal import strip_ansi
from .summary import IMAGE_MIMES, summarize_output

LINK_CHARS = 2_000
"""An output whose text is longer than this is offered as a link (an image always is)."""
CAPTION_CHARS = 120
TEXT_MIMES = ("text/plain", "text/markdown", "text/html", "text/latex", "application/json")
"""A rich output's text, in the order it is preferred."""


@dataclass(frozen=True)
class OutputLink:
    """One output offered as a resource: which, what type, how big, in a few words."""

    cell_id: str
    index: int
    run: str
    mime_type: str
    caption: str
    size: int


@dataclass(frozen=True)
class OutputContent:
    """One output whole: ``text`` (masked) or ``blob`` (an image, base64), never both."""

    mime_type: str
    text: str | None = None
    blob: str | None = None


def output_content(output: dict[str, Any]) -> OutputContent:
    """An output (as :func:`~.snapshot.read_cell` gives it, masked) whole.

    Example:
        >>> output_content({"output_type": "stream", "name": "stdout", "text": "\\x1b[1mhi\\n"})
        OutputContent(mime_type='text/plain', text='hi\\n', blob=None)
        >>> output_content({"output_type": "display_data", "metadata": {},
        ...                 "data": {"image/png": "iVBO\\nRw==", "text/plain": "<Figure>"}})
        OutputContent(mime_type='image/png', text=None, blob='iVBORw==')
    """
    kind = output.get("output_type")
    if kind == "stream":
        return OutputContent("text/plain", text=strip_ansi(_joined(output.get("text"))))
    if kind == "error":
        head = f"{output.get('ename', '')}: {output.get('evalue', '')}\n"
        trace = "\n".join(_joined(line) for line in output.get("traceback") or [])
        return OutputContent("text/plain", text=head + strip_ansi(trace))
    data = output.get("data") or {}
    for mime in IMAGE_MIMES:
        if mime in data:
            if mime == "image/svg+xml":
                return OutputContent(mime, text=_joined(data[mime]))
            return OutputContent(mime, blob="".join(_joined(data[mime]).split()))
    for mime in TEXT_MIMES:
        if mime in data:
            value = data[mime]
            text = json.dumps(value, indent=1) if mime == "application/json" else _joined(value)
            return OutputContent(mime, text=strip_ansi(text) if mime == "text/plain" else text)
    return OutputContent("application/json", text=json.dumps(data, indent=1))


def output_links(cell_id: str, run: str, outputs: Sequence[dict[str, Any]]) -> list[OutputLink]:
    """The outputs of a cell worth a link: its images, and texts over :data:`LINK_CHARS`.

    Example:
        >>> long = {"output_type": "stream", "name": "stdout", "text": "x" * 5000}
        >>> [(l.index, l.mime_type, l.size) for l in output_links("c1", "r1", [
        ...     {"output_type": "stream", "name": "stdout", "text": "short"}, long])]
        [(1, 'text/plain', 5000)]
    """
    links = []
    for index, output in enumerate(outputs):
        content = output_content(output)
        size = len(content.blob or "") * 3 // 4 if content.blob else len(content.text or "")
        if content.blob is None and content.mime_type not in IMAGE_MIMES and size <= LINK_CHARS:
            continue
        caption = summarize_output(output, CAPTION_CHARS)[0].replace("\n", " ")
        links.append(OutputLink(cell_id, index, run, content.mime_type, caption, size))
    return links


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")
