"""How each MIME type of an output is masked: the one rule every route uses (pure).

:meth:`SecretMasker.mask_value <jupyter_loop.secrets.SecretMasker.mask_value>` asks here
for each entry of a dict, so the rule holds wherever outputs are masked: on their way
into the notebook (and so the ``.ipynb``, the shared document, the full-output store and
route), in a kernel keeper's journal, and in every read of a cell (MCP, the assistant).

* Text types are masked as the text they are: ``text/*`` (HTML, Markdown, LaTeX, CSV,
  plain), ``application/javascript``, and ``image/svg+xml``: an SVG is an image, but its
  text is readable in the file and shown in the picture.
* JSON types (``application/json``, ``application/*+json``): every string, keys too: a
  dict shown as JSON may be keyed by a secret.
* ``image/png``: the text chunks are masked (:mod:`.png_text`), the pixels kept; a payload
  that is not a PNG is masked as the text it is then.
* Other binary types (``image/*``, ``audio/*``, ``video/*``, PDF, octet-stream) are kept as
  they are: their base64 shows no text, and masking it would corrupt them. Their own
  metadata (JPEG comments, PDF text) is not read: see the README's "Not there yet".

Example:
    >>> from jupyter_loop.secrets import SecretMasker
    >>> masker = SecretMasker(["hunter2-hunter2"], token_patterns=False)
    >>> masker.mask_value({"image/svg+xml": "<text>hunter2-hunter2</text>",
    ...                    "application/json": {"hunter2-hunter2": 1},
    ...                    "image/jpeg": "/9j/hunter2-hunter2"})
    {'image/svg+xml': '<text>••••••</text>', 'application/json': {'••••••': 1}, \
'image/jpeg': '/9j/hunter2-hunter2'}
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .png_text import mask_png_text

if TYPE_CHECKING:  # a circle for types only, kept on purpose (tests/project/test_imports.py)
    from .secrets import SecretMasker

BINARY_TYPES = ("image/", "audio/", "video/", "application/pdf", "application/octet-stream")
"""Prefixes of the MIME types whose payload is base64 (kept, but for PNG)."""
TEXT_IMAGES = ("image/svg+xml",)
"""``image/`` types that are text."""


def mask_entry(masker: SecretMasker, key: Any, item: Any) -> Any:
    """``item``, the value under ``key`` in a dict, masked as ``key`` says it is (a MIME
    type, or the name of a field: then as any value)."""
    if not isinstance(key, str):
        return masker.mask_value(item)
    kind = key.split(";", 1)[0].strip().lower()
    payload = isinstance(item, str) or (
        isinstance(item, list) and all(isinstance(line, str) for line in item)
    )
    if kind == "image/png" and payload:
        return _mask_png(masker, item)
    if payload and kind.startswith(BINARY_TYPES) and kind not in TEXT_IMAGES:
        return item
    if kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json")):
        return _mask_json(masker, item)
    return masker.mask_value(item)


def _mask_json(masker: SecretMasker, value: Any) -> Any:
    """A JSON payload with every string masked, keys too; two keys that mask alike are
    told apart by a number (one would otherwise be lost)."""
    if isinstance(value, list):
        return [_mask_json(masker, item) for item in value]
    if not isinstance(value, Mapping):
        return masker.mask_value(value)
    masked: dict[Any, Any] = {}
    for key, item in value.items():
        shown = masker.mask(key) if isinstance(key, str) else key
        number = 2
        while shown in masked:
            shown, number = f"{masker.mask(key)} {number}", number + 1
        masked[shown] = _mask_json(masker, item)
    return masked


def _mask_png(masker: SecretMasker, value: str | list[str]) -> Any:
    """A base64 PNG with its text chunks masked (the same value if nothing was)."""
    text = value if isinstance(value, str) else "".join(value)
    try:
        png = base64.b64decode(text)
        masked = mask_png_text(png, masker.mask, masker.contains_secret)
    except (binascii.Error, ValueError):  # not base64, or not a PNG: text, then
        return masker.mask_value(value)
    return value if masked is png else base64.b64encode(masked).decode("ascii")
