"""One output of a cell as the document should show it (pure, no I/O).

A stream's text is a :class:`~.text_buffer.TextBuffer` (appends and tail edits never copy
it); any other output is kept as its output dict, with its size counted once. Once the
document holds an output the model no longer needs, the model lets go of its content
(:meth:`ShownOutput.release`): a stream keeps its unfinished line, any other output what a
display update needs (its type and execution count). A rewrite takes the content back from
the document (:meth:`ShownOutput.take_back`).

Example:
    >>> item = item_from_document({"output_type": "stream", "name": "stdout", "text": "hi\\n"})
    >>> (item.is_stream, item.size)
    (True, 14)
    >>> item.as_output()
    {'output_type': 'stream', 'name': 'stdout', 'text': 'hi\\n'}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .budget import value_size
from .text_buffer import TextBuffer


@dataclass(eq=False)
class ShownOutput:
    """One output as the document should show it.

    Attributes:
        kind: ``"stream"`` or the output type.
        name: A stream's name.
        text: A stream's text.
        output: Any other output, as its dict.
        display_id: Lets display updates find the output.
        part: Its part in the run's full record (``None``: not recorded).
        rich_size: The size of ``output`` (see :func:`~.budget.value_size`).
        let_go: ``output`` was let go of (it holds only its type and execution count).
    """

    kind: str
    name: str = ""
    text: TextBuffer = field(default_factory=TextBuffer)
    output: dict[str, Any] = field(default_factory=dict)
    display_id: str | None = None
    part: int | None = None
    rich_size: int = 0
    let_go: bool = False

    @property
    def is_stream(self) -> bool:
        return self.kind == "stream"

    @property
    def released(self) -> bool:
        """Whether part of the content was let go of (:meth:`take_back` it to show it)."""
        return self.text.released > 0 if self.is_stream else self.let_go

    @property
    def size(self) -> int:
        return self.text.size if self.is_stream else self.rich_size

    def as_output(self) -> dict[str, Any]:
        if self.is_stream:
            return {"output_type": "stream", "name": self.name, "text": self.text.value()}
        if self.let_go:
            raise RuntimeError("this output was let go of: take it back first")
        return self.output

    def release(self) -> None:
        """Let go of the content the document holds and the model does not need."""
        if self.is_stream:
            self.text.release_lines()
        elif not self.let_go:
            kept = ("output_type", "execution_count")
            self.output = {key: self.output[key] for key in kept if key in self.output}
            self.let_go = True

    def take_back(self, document: dict[str, Any]) -> None:
        """Take the content let go of back from ``document``, the output as last written."""
        if self.is_stream:
            text = document.get("text", "")
            self.text.take_back(text if isinstance(text, str) else "".join(text))
        elif self.let_go:
            self.output, self.let_go = document, False


def rich_item(output: dict[str, Any], **extra: Any) -> ShownOutput:
    """A non-stream output (``extra``: its display id and part)."""
    kind = str(output.get("output_type", "display_data"))
    return ShownOutput(kind, output=output, rich_size=value_size(output), **extra)


def item_from_document(output: dict[str, Any]) -> ShownOutput:
    """An output as the document holds it (nbformat allows stream text as a list)."""
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        text = text if isinstance(text, str) else "".join(text)
        return ShownOutput("stream", name=str(output.get("name", "stdout")), text=TextBuffer(text))
    return rich_item(output)
