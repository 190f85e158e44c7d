"""What is fixed for the whole of one agent turn, decided when it starts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..access.rights import Ability
from ..execution.run import RunOutcome
from ..notebook_view.vision import ImageBudget

RunCells = Callable[[list[str], dict[str, str], str], Awaitable[dict[str, RunOutcome]]]
"""Runs cells (ids, the hashes of the sources approved, the approval's id or "") until
they end."""


@dataclass(frozen=True)
class TurnPlan:
    """What is fixed for the whole turn."""

    turn_id: str
    room_id: str
    file_id: str
    user: str
    message: str
    model: str
    focus_ids: tuple[str, ...]
    policy: str
    max_steps: int
    budget_tokens: int
    stream_interval: float
    active_cell_id: str | None = None
    images: ImageBudget | None = None
    """Images per step for models that take them; None: images are off."""
    withheld: frozenset[Ability] = frozenset()
    """What the user may not do whose tools the turn is not offered (:data:`WITHHELD`)."""

    @property
    def may_propose(self) -> bool:
        return Ability.PROPOSE not in self.withheld

    @property
    def may_read_variables(self) -> bool:
        return Ability.VARIABLES not in self.withheld


WITHHELD = (Ability.PROPOSE, Ability.VARIABLES)
"""Abilities whose tools a turn of a user without them is not offered (none are read, none
proposed). Running is not among them: ``run_cells`` stays offered and answers that the user
may not run cells, so the model can say so (the prompt could not say why otherwise)."""
