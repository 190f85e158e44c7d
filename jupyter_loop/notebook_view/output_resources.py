"""A cell's outputs as resources an outside agent fetches when it wants them.

A tool result names a cell's images, and its outputs too long to send inline, as links,
each with a short caption (type, size, shape), so a client is never flooded and still
knows what there is; reading a link gives that one output whole: its text (masked whole
before it left the notebook, as every output an agent reads) or its image's bytes.

Where the notebook holds a stand-in (a placeholder for an output over its budget, or the
marker of a stream's cut middle), reading the link gives what the full-output store kept:
that output whole, or the whole run's text for a marker. Once the store no longer keeps
the run, the stand-in itself is the answer.

Stance: a link names the run whose outputs the cell showed (``run``; ``"file"`` for
outputs that came with the file). Read after the cell ran again, it fails plainly rather
than answering with another run's output under the same name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import NotFound
from ..execution.full_outputs.store import OutputStore, RunKey
from ..execution.outputs.budget import METADATA_KEY, value_size
from ..execution.outputs.terminal import strip_ansi
from ..execution.outputs.traits import OUTPUTS_PATH
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
    image: str = ""
    """An image's fingerprint (:func:`image_fingerprint`), to tell it from the images a
    result carries inline (``""``: not an image)."""


def image_fingerprint(base64: str) -> str:
    """A short digest of an image's base64 payload (its whitespace ignored, as both an
    output's content and an attachment drop it).

    >>> image_fingerprint("iVBO\\nRw==") == image_fingerprint("iVBORw==")
    True
    """
    import hashlib

    return hashlib.sha256("".join(base64.split()).encode()).hexdigest()[:32]


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


@dataclass(frozen=True)
class KeptAddress:
    """Where the full-output store keeps what a stand-in stands for: one part of a run's
    record, or (``part`` ``None``) the whole run."""

    url: str
    key: RunKey
    part: int | None


def kept_address(output: dict[str, Any]) -> KeptAddress | None:
    """The record a stand-in output links to (``None``: the output is whole, or was not
    kept).

    Example:
        >>> url = "/user/ada/api/jupyter-loop/outputs/f1/c1/r1/2"
        >>> kept_address({"metadata": {"jupyter_loop": {"full_output": url}}}).part
        2
        >>> kept_address({"metadata": {"jupyter_loop": {"full_output": url[:-2]}}}).key.run_id
        'r1'
        >>> kept_address({"output_type": "stream", "text": "x"}) is None
        True
    """
    meta = output.get("metadata")
    ours = meta.get(METADATA_KEY) if isinstance(meta, dict) else None
    url = ours.get("full_output") if isinstance(ours, dict) else None
    if not isinstance(url, str) or f"/{OUTPUTS_PATH}/" not in f"/{url}":
        return None
    names = f"/{url}".split(f"/{OUTPUTS_PATH}/", 1)[1].strip("/").split("/")
    try:
        if len(names) == 3:
            return KeptAddress(url, RunKey(*names), None)
        if len(names) == 4 and names[3].isdigit():
            return KeptAddress(url, RunKey(*names[:3]), int(names[3]))
    except NotFound:  # not names of ours
        return None
    return None


def kept_content(store: OutputStore, address: KeptAddress) -> OutputContent | None:
    """What the store keeps at ``address``, unmasked (``None``: no longer kept)."""
    try:
        parts = store.parts(address.key)
        if address.part is None:
            link = f"{address.url.rstrip('/')}/{{}}"
            run = b"".join(store.full_text(address.key, link.format))
            return OutputContent("text/plain", text=strip_ansi(run.decode("utf-8", "replace")))
        stored = next((p for p in parts if p.part == address.part and not p.dropped), None)
        if stored is None:
            return None
        if stored.type == "stream":
            kept = b"".join(store.read(address.key, stored))
            return OutputContent("text/plain", text=strip_ansi(kept.decode("utf-8", "replace")))
        return output_content(_largest_kind(store.load_output(address.key, stored)))
    except (NotFound, OSError, ValueError):
        return None


def output_links(cell_id: str, run: str, outputs: Sequence[dict[str, Any]]) -> list[OutputLink]:
    """The outputs of a cell worth a link: its images, texts over :data:`LINK_CHARS`, and
    stand-ins for what the full-output store keeps (their size: what was left out).

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
        left_out = _left_out_bytes(output) if kept_address(output) is not None else None
        if left_out is not None:
            size = left_out
        elif content.blob is None and content.mime_type not in IMAGE_MIMES:
            if size <= LINK_CHARS:
                continue
        caption = summarize_output(output, CAPTION_CHARS)[0].replace("\n", " ")
        image = image_fingerprint(content.blob) if content.blob is not None else ""
        links.append(OutputLink(cell_id, index, run, content.mime_type, caption, size, image))
    return links


def _largest_kind(output: dict[str, Any]) -> dict[str, Any]:
    """A rich output with only its largest type: what the notebook could not keep (an
    HTML table, not the ``text/plain`` repr beside it).

    >>> _largest_kind({"output_type": "display_data", "data": {"text/plain": "<T>",
    ...                "text/html": "<table>…</table>"}})["data"]
    {'text/html': '<table>…</table>'}
    """
    data = output.get("data")
    if not isinstance(data, dict) or not data:
        return output
    kind = max(data, key=lambda mime: value_size(data[mime]))  # as the full-output handler
    return {**output, "data": {kind: data[kind]}}


def _left_out_bytes(output: dict[str, Any]) -> int:
    """What a stand-in says the notebook left out, in bytes (0 when it does not say)."""
    omitted = output["metadata"][METADATA_KEY].get("omitted")
    found = omitted.get("bytes") if isinstance(omitted, dict) else None
    return int(found) if isinstance(found, int | float) else 0  # a float, read from Y


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")
