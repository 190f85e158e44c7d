"""Secrets masked in a run's outputs before they are written anywhere (pure, no I/O).

Stream text goes through one :class:`~jupyter_loop.secrets.StreamMasker` per stream, so a
secret split across messages is still masked. A stream masker holds back a tail that
could be the start of a secret. That text is released as soon as another output follows
(another stream, a rich output, a clear; a display update changes an earlier output in
place and releases nothing) and at a boundary of the run (:meth:`OutputMasking.release`:
a prompt, the end), so output order is kept and nothing stays hidden once a run is over.

Example:
    >>> from jupyter_loop.secrets import SecretMasker
    >>> masking = OutputMasking(SecretMasker(["hunter2-hunter2"], token_patterns=False))
    >>> masking.ops(AppendStream("stdout", "pw=hunter2-hun"))
    [AppendStream(name='stdout', text='pw=')]
    >>> masking.ops(AppendStream("stdout", "ter2\\n"))
    [AppendStream(name='stdout', text='••••••\\n')]
"""

from __future__ import annotations

from ...secrets import SecretMasker, StreamMasker
from .ops import AppendOutput, AppendStream, OutputOp, UpdateDisplay


class OutputMasking:
    """Masks the output edits of one cell; one instance per run."""

    def __init__(self, masker: SecretMasker) -> None:
        self._masker = masker
        self._streams: dict[str, StreamMasker] = {}
        self._holding: str | None = None  # the stream whose masker may hold text back

    def ops(self, op: OutputOp) -> list[OutputOp]:
        """``op`` masked, preceded by any text it releases; empty ones are dropped."""
        if isinstance(op, AppendStream) and op.name == self._holding:
            return self._stream_op(op)
        if isinstance(op, UpdateDisplay):  # changes an output in place: the stream goes on
            data = self._masker.mask_value(op.data)
            metadata = self._masker.mask_value(op.metadata)
            return [UpdateDisplay(op.display_id, data, metadata)]
        released = self.release()
        if isinstance(op, AppendStream):
            return released + self._stream_op(op)
        if isinstance(op, AppendOutput):
            masked = AppendOutput(self._masker.mask_value(op.output), op.display_id)
            return [*released, masked]
        return [*released, op]

    def release(self) -> list[OutputOp]:
        """Whatever text is held back, masked, as stream edits."""
        name, self._holding = self._holding, None
        if name is None:
            return []
        rest = self._streams[name].flush()
        return [AppendStream(name, rest)] if rest else []

    def text(self, text: str) -> str:
        """A one-off string masked (an ``input()`` prompt)."""
        return self._masker.mask(text)

    def _stream_op(self, op: AppendStream) -> list[OutputOp]:
        stream = self._streams.get(op.name)
        if stream is None:
            stream = self._streams[op.name] = self._masker.stream()
        self._holding = op.name
        shown = stream.feed(op.text)
        return [AppendStream(op.name, shown)] if shown else []
