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
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..execution.kernel.introspect import Variable

if TYPE_CHECKING:
    from ..execution.service import ExecutionService


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


def record_of(variable: Variable) -> VariableRecord:
    """What a completion needs of a variable the kernel described.

    >>> record_of(Variable("df", "pandas.DataFrame", shape=(2, 1),
    ...                    columns=(("price_eur_2024", "float64"),))).line()
    'df: pandas.DataFrame (shape 2×1; columns: price_eur_2024 float64)'
    """
    details = []
    if variable.shape is not None:
        details.append("shape " + "×".join(str(size) for size in variable.shape))
    if variable.length is not None:
        details.append(f"length {variable.length}")
    if variable.dtype:
        details.append(f"dtype {variable.dtype}")
    if variable.columns:
        details.append("columns: " + ", ".join(f"{name} {kind}" for name, kind in variable.columns))
    if variable.repr is not None:
        details.append(f"= {variable.repr}")
    return VariableRecord(variable.name, variable.type, "; ".join(details))


class KernelVariables:
    """The assistant's silent, read-only introspection (``ExecutionService.variables``) as a
    :class:`VariableSource`; a busy kernel answers nothing (the service raises ``Conflict``,
    which the completion service treats as "no variables")."""

    def __init__(self, execution: ExecutionService) -> None:
        self._execution = execution

    async def variables(self, path: str) -> Sequence[VariableRecord]:
        report = await self._execution.variables(path)
        return [record_of(variable) for variable in report.variables]
