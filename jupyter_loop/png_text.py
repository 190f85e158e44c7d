"""Secrets masked in the text a PNG carries beside its pixels (pure, no I/O).

A PNG holds text in ``tEXt``, ``zTXt`` (compressed) and ``iTXt`` (UTF-8, perhaps
compressed) chunks: matplotlib writes its name there, ``savefig(metadata=...)`` and
Pillow's ``PngInfo`` whatever they are given. Such text is shown by image viewers and
read by anyone who has the ``.ipynb``, so a secret in it is masked like any output text.

Each text chunk is decoded and its text masked; a changed chunk is written back as an
``iTXt`` chunk (the mask is not Latin-1, which ``tEXt`` and ``zTXt`` must be), compressed
if it was, with its length and CRC computed anew. A chunk whose keyword or language tag
holds a secret, or that cannot be decoded, is dropped: both are ancillary, and the image
is the same without them. Any other ancillary chunk whose bytes hold a secret (``eXIf``,
a private chunk) is dropped too. The critical chunks (``IHDR``, ``PLTE``, ``IDAT``,
``IEND``) are copied as they are: the pixels are never decoded or re-encoded, so a PNG
with nothing to mask comes back as the very same bytes.

Example:
    >>> png = chunk(b"IHDR", bytes(13)) + chunk(b"tEXt", b"Comment\\x00pw hunter2-x")
    >>> masked = mask_png_text(SIGNATURE + png + chunk(b"IEND", b""),
    ...                        lambda text: text.replace("hunter2-x", "••••••"),
    ...                        lambda text: "hunter2-x" in text)
    >>> [(kind, text) for kind, text in text_chunks(masked)]
    [(b'iTXt', 'Comment: pw ••••••')]
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator

SIGNATURE = b"\x89PNG\r\n\x1a\n"
TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")
MAX_TEXT_BYTES = 8 * 1024 * 1024
"""A compressed text chunk that inflates to more than this is dropped (no zip bomb)."""


class NotPNG(ValueError):
    """The bytes are not a well-formed PNG (the caller then masks them as text)."""


def chunk(kind: bytes, data: bytes) -> bytes:
    """One chunk as a PNG holds it: length, type, data, CRC of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def chunks(png: bytes) -> Iterator[tuple[bytes, bytes]]:
    """``(type, data)`` of each chunk, up to ``IEND``.

    Raises:
        NotPNG: No PNG signature, a chunk running past the end, or no ``IEND``.
    """
    if not png.startswith(SIGNATURE):
        raise NotPNG("no PNG signature")
    position = len(SIGNATURE)
    while True:
        if position + 12 > len(png):
            raise NotPNG("a chunk runs past the end")
        (length,) = struct.unpack_from(">I", png, position)
        kind = png[position + 4 : position + 8]
        end = position + 12 + length
        if end > len(png) or not kind.isalpha():
            raise NotPNG("a chunk runs past the end")
        yield kind, png[position + 8 : position + 8 + length]
        position = end
        if kind == b"IEND":
            return


def mask_png_text(
    png: bytes, mask: Callable[[str], str], holds_secret: Callable[[str], bool]
) -> bytes:
    """``png`` with the text of its chunks masked by ``mask``; ``png`` itself if nothing
    was masked. ``holds_secret`` tells whether a text holds a secret (the bytes of an
    ancillary chunk are asked as Latin-1). Anything after ``IEND`` is dropped if it holds
    a secret.

    Raises:
        NotPNG: ``png`` is not a well-formed PNG.
    """
    kept: list[bytes] = []
    changed = False
    end = len(SIGNATURE)
    for kind, data in chunks(png):
        end += 12 + len(data)
        if kind in TEXT_CHUNKS:
            written = _masked_text_chunk(kind, data, mask, holds_secret)
        elif kind[0:1].islower() and holds_secret(data.decode("latin-1")):
            written = b""  # an ancillary chunk of another kind, holding a secret
        else:
            kept.append(png[end - 12 - len(data) : end])
            continue
        changed = changed or written != png[end - 12 - len(data) : end]
        kept.append(written)
    trailing = png[end:]
    if trailing and holds_secret(trailing.decode("latin-1")):
        trailing, changed = b"", True
    return SIGNATURE + b"".join(kept) + trailing if changed else png


def text_chunks(png: bytes) -> Iterator[tuple[bytes, str]]:
    """``(type, "keyword: text")`` of each text chunk (what a viewer shows)."""
    for kind, data in chunks(png):
        if kind in TEXT_CHUNKS:
            decoded = _decoded(kind, data)
            if decoded is not None:
                yield kind, f"{decoded[0]}: {decoded[3]}"


def _masked_text_chunk(
    kind: bytes, data: bytes, mask: Callable[[str], str], holds_secret: Callable[[str], bool]
) -> bytes:
    """The chunk to write for a text chunk: as it was, masked as an ``iTXt``, or nothing."""
    decoded = _decoded(kind, data)
    if decoded is None:
        return b""  # undecodable text: nobody can tell whether it holds a secret
    keyword, language, translated, text, compressed = decoded
    if holds_secret(keyword) or holds_secret(language):
        return b""  # both must stay Latin-1 / ASCII: no room for the mask
    shown_translated, shown_text = mask(translated), mask(text)
    if (shown_translated, shown_text) == (translated, text):
        return chunk(kind, data)
    body = shown_text.encode("utf-8")
    header = keyword.encode("latin-1") + b"\0" + (b"\1\0" if compressed else b"\0\0")
    header += language.encode("ascii") + b"\0" + shown_translated.encode("utf-8") + b"\0"
    return chunk(b"iTXt", header + (zlib.compress(body) if compressed else body))


def _decoded(kind: bytes, data: bytes) -> tuple[str, str, str, str, bool] | None:
    """``(keyword, language, translated keyword, text, compressed)``; ``None`` when the
    chunk does not decode as its type says."""
    try:
        keyword, rest = data.split(b"\0", 1)
        if kind == b"tEXt":
            return keyword.decode("latin-1"), "", "", rest.decode("latin-1"), False
        if kind == b"zTXt":
            if rest[:1] != b"\0":
                return None
            return keyword.decode("latin-1"), "", "", _inflate(rest[1:]).decode("latin-1"), True
        flag, method, rest = rest[0], rest[1], rest[2:]
        language, translated, text = rest.split(b"\0", 2)
        if method != 0 or flag not in (0, 1):
            return None
        body = _inflate(text) if flag else text
        return (
            keyword.decode("latin-1"),
            language.decode("ascii"),
            translated.decode("utf-8"),
            body.decode("utf-8"),
            bool(flag),
        )
    except (ValueError, IndexError, zlib.error):
        return None


def _inflate(data: bytes) -> bytes:
    inflater = zlib.decompressobj()
    body = inflater.decompress(data, MAX_TEXT_BYTES)
    if inflater.unconsumed_tail:
        raise ValueError("compressed text over the limit")
    return body
