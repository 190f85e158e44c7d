"""What a tool call gave (:class:`ToolOutcome`), a failed call as the model and people are
told of it, and a call's arguments as receipts show them."""

from __future__ import annotations

from dataclasses import dataclass

from ...notebook_view.summary import ImageAttachment


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call gave.

    Attributes:
        content: The result for the model (full; the context cuts it to its share).
        summary: One line for people ("read cell 3", "ran cell 7 → ZeroDivisionError").
        detail: A short text for people (expandable in the panel).
        ok: Whether the call succeeded.
        cell_ids: Cells the call was about (they come into focus).
        arguments: A short rendering of the arguments.
        notice: Set when the model got the call wrong: what to tell people.
        images: The image outputs the result shows, when the toolbox was made with
            ``result_images`` (a channel with no context of its own, such as MCP). The
            panel's turn gets a cell's images through its context, which brings the cells a
            call was about into focus; tool results there stay text (not every API takes an
            image in a tool result).
    """

    content: str
    summary: str
    detail: str = ""
    ok: bool = True
    cell_ids: tuple[str, ...] = ()
    arguments: str = ""
    notice: str | None = None
    images: tuple[ImageAttachment, ...] = ()


def failed(name: str, message: str, arguments: str) -> ToolOutcome:
    notice = f"The agent's call to {name} failed: {message}"
    return ToolOutcome(f"error: {message}", f"{name} failed", message, False, (), arguments, notice)


def short_arguments(arguments_json: str, limit: int = 200) -> str:
    """The arguments on one line, cut to ``limit`` (for receipts and the journal)."""
    text = " ".join(arguments_json.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
