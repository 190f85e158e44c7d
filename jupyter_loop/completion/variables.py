"""The seam through which completions learn the kernel's variables.

The completion service asks a :class:`VariableSource` for the user's variables when it
builds a prompt; the source is expected to use the same silent, read-only introspection
as the assistant (never code from a model) and to answer nothing when the kernel is busy.

Example:
    >>> record = VariableRecord(name="df", type_name="DataFrame", detail="columns: a, b")
    >>> record.line()
    'df: DataFrame (columns: a, b)'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class VariableRecord:
    """One variable of the user's kernel.

    Attributes:
        name: The variable's name.
        type_name: Its type, as Python names it (``DataFrame``, ``dict``).
        detail: What else helps completing code: columns, shape, keys, length.
    """

    name: str
    type_name: str
    detail: str = ""

    def line(self) -> str:
        """The variable as one line of a prompt."""
        return f"{self.name}: {self.type_name}" + (f" ({self.detail})" if self.detail else "")


@runtime_checkable
class VariableSource(Protocol):
    """Where the kernel's variables come from (a read-only introspection of the kernel)."""

    async def variables(self, path: str) -> Sequence[VariableRecord]:
        """The variables of the kernel of the notebook at ``path``; empty when unknown or
        when the kernel is busy (a completion never waits on a running cell)."""
        ...
