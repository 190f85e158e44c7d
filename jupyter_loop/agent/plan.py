"""What is fixed for the whole of one agent turn, decided when it starts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..execution.run import RunOutcome
from .vision import ImageBudget

RunCells = Callable[[list[str], dict[str, str]], Awaitable[dict[str, RunOutcome]]]
"""Runs cells (ids, and the hashes of the sources approved) until they end."""


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
    may_propose: bool = True
    """The user may edit the notebook: without it the turn is offered no ``propose_*`` tool."""
    may_read_variables: bool = True
    """The user has the kernel rights reading variables needs: without them none are read."""
