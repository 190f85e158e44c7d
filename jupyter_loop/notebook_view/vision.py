"""Images for models that take them: downscaled, within a per-step budget.

The context picks the image outputs of the cells it shows in full (:class:`ImageAttachment`,
raw base64 from the notebook). Here each is decoded with Pillow and, when its longest side
is over :data:`MAX_SIDE` pixels, shrunk to fit (JPEG stays JPEG; PNG, GIF and WebP become
PNG, which every image-taking API accepts); then as many as the budget allows (a count and
a number of bytes) become :class:`ImagePart`\\ s. SVG is not rasterised (that needs a native
library); the context describes it instead, as it does for text-only models.

Pillow is a dependency rather than optional: decoding PNG/JPEG/GIF/WebP and resampling
them well is its job, it ships wheels for every platform JupyterLab runs on, and without it
a 4000×3000 plot would go to the model at full size (the APIs shrink it anyway, after the
upload) or not at all.

A step's prompt is rebuilt at every step, so shrunk images are kept by their payload:
each image is decoded once per turn.

Example:
    >>> import base64, io
    >>> from PIL import Image
    >>> buffer = io.BytesIO()
    >>> Image.new("RGB", (3000, 1500), "white").save(buffer, "PNG")
    >>> wide = ImageAttachment("image/png", base64.b64encode(buffer.getvalue()).decode())
    >>> prepared = ImageShrinker().prepare([wide, wide], ImageBudget(count=1))
    >>> [Image.open(io.BytesIO(base64.b64decode(p.data))).size for p in prepared.parts]
    [(1024, 512)]
    >>> prepared.notes
    ('1 more image left out (at most 1 image, 3.0 MB a step)',)
"""

from __future__ import annotations

import base64
import binascii
import io
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..providers import ChatMessage, ImagePart
from ._media import human_size
from .summary import ImageAttachment

if TYPE_CHECKING:  # Pillow is imported by the first image shrunk, not by the server's start
    from PIL import Image

MAX_SIDE = 1024
"""Longest side, in pixels, of an image sent to a model."""
_KEPT = {"image/png": "PNG", "image/jpeg": "JPEG"}
_CACHE_SIZE = 32


@dataclass(frozen=True)
class ImageBudget:
    """Images a step may carry: how many, and how many bytes in all (after shrinking)."""

    count: int = 4
    bytes: int = 3 * 1024 * 1024


@dataclass(frozen=True)
class PreparedImages:
    """The images to attach, and notes for the model about those left out."""

    parts: tuple[ImagePart, ...]
    notes: tuple[str, ...]
    attached: tuple[ImageAttachment, ...] = ()
    """The images given that ``parts`` carry (shrunk), so a caller can tell which of them
    went inline (the MCP endpoint links only the others)."""

    @property
    def size(self) -> int:
        """Bytes of the attached images (decoded)."""
        return sum(len(part.data) * 3 // 4 for part in self.parts)

    @property
    def notes_text(self) -> str:
        """A line for each note, to follow the text the images go with."""
        return "".join(f"\n({note}; described in text only)" for note in self.notes)


def attach(message: ChatMessage, prepared: PreparedImages) -> ChatMessage:
    """``message`` carrying the prepared images, with a line about any left out."""
    return replace(message, content=message.content + prepared.notes_text, images=prepared.parts)


class ImageShrinker:
    """Shrinks images to :data:`MAX_SIDE` once each (per turn) and applies the budget."""

    def __init__(self) -> None:
        self._shrunk: dict[tuple[str, str], ImagePart | None] = {}

    def prepare(self, images: Sequence[ImageAttachment], budget: ImageBudget) -> PreparedImages:
        """The images that fit the budget, in order; notes say what was left out and why."""
        parts: list[ImagePart] = []
        attached: list[ImageAttachment] = []
        unreadable = over = 0
        used = 0
        for image in images:
            part = self._shrink(image)
            if part is None:
                unreadable += 1
                continue
            size = len(part.data) * 3 // 4
            if len(parts) >= budget.count or used + size > budget.bytes:
                over += 1
                continue
            parts.append(part)
            attached.append(image)
            used += size
        notes = []
        if over:
            limit = f"at most {budget.count} image{'s' * (budget.count != 1)}"
            notes.append(
                f"{over} more image{'s' * (over != 1)} left out "
                f"({limit}, {human_size(budget.bytes)} a step)"
            )
        if unreadable:
            notes.append(f"{unreadable} image{'s' * (unreadable != 1)} could not be decoded")
        return PreparedImages(tuple(parts), tuple(notes), tuple(attached))

    def _shrink(self, image: ImageAttachment) -> ImagePart | None:
        key = (image.mime, image.base64)
        if key not in self._shrunk:
            if len(self._shrunk) >= _CACHE_SIZE:
                self._shrunk.clear()
            self._shrunk[key] = shrink(image)
        return self._shrunk[key]


def shrink(image: ImageAttachment) -> ImagePart | None:
    """The image with its longest side at most :data:`MAX_SIDE`; None if it cannot be read.

    Small PNG and JPEG images are passed on as they are (no re-encoding).
    """
    from PIL import Image

    try:
        data = base64.b64decode(image.base64, validate=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as opened:
                if max(opened.size) <= MAX_SIDE and image.mime in _KEPT:
                    return ImagePart(image.mime, _b64(data))
                opened.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
                return _encode(opened, "JPEG" if image.mime == "image/jpeg" else "PNG")
    except (binascii.Error, ValueError, OSError, Image.DecompressionBombError, Warning):
        return None


def _encode(image: Image.Image, kind: str) -> ImagePart:
    if kind == "JPEG" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    elif kind == "PNG" and image.mode not in ("RGB", "RGBA", "L", "LA", "P"):
        image = image.convert("RGBA")
    buffer = io.BytesIO()
    image.save(buffer, kind, **({"quality": 85} if kind == "JPEG" else {}))
    return ImagePart(f"image/{kind.lower()}", _b64(buffer.getvalue()))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
