"""What an MCP tool's result shows: its text, its images shrunk as the panel's model gets
them, and links to the outputs of the cells it names (each image once).

The tools (:mod:`.tools`) say what to answer; this module says how it is put as the
result's content.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..agent.outside_reads import AgentView
from ..notebook_view.output_resources import OutputLink, image_fingerprint
from ..notebook_view.summary import ImageAttachment
from ..notebook_view.vision import ImageBudget, ImageShrinker
from .resources import resource_links


def text_content(text: str) -> list[Any]:
    """A plain text result (the SDK's types load on first use: ``McpTool`` says why)."""
    import mcp_types as types

    return [types.TextContent(type="text", text=text)]


@dataclass(frozen=True)
class Shown:
    """A result's content, and the fingerprints of the images it carries inline."""

    content: list[Any]
    inline: frozenset[str] = frozenset()

    def linking(self, path: str, links: tuple[OutputLink, ...]) -> list[Any]:
        """The content and the links to the outputs, each image once: one carried inline
        is not also linked (a host turned such a link into an unusable image URL)."""
        kept = tuple(link for link in links if not (link.image and link.image in self.inline))
        return self.content + resource_links(path, kept)


async def with_images(text: str, images: tuple[ImageAttachment, ...]) -> Shown:
    """``text`` and its images as the panel's model gets them: each shrunk to at most
    1024 pixels a side, as many as :class:`ImageBudget` allows, a note for the rest (a
    client is never handed a 4000-pixel plot inline). Decoding runs off the event loop."""
    if not images:
        return Shown(text_content(text))
    import mcp_types as types

    prepared = await asyncio.to_thread(ImageShrinker().prepare, images, ImageBudget())
    content = text_content(text + prepared.notes_text) + [
        types.ImageContent(type="image", data=part.data, mime_type=part.mime_type)
        for part in prepared.parts
    ]
    return Shown(content, frozenset(image_fingerprint(i.base64) for i in prepared.attached))


async def view_content(view: AgentView) -> Shown:
    """A read of the notebook (``read_notebook``, ``get_outputs``) with its images."""
    return await with_images(view.text, view.images)
