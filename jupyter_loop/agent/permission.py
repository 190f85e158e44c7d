"""Whether a turn may run cells: the one approval path (:mod:`.asking`), shown in the turn.

A request shows the sources it asks to run (and their hashes: an answer holds only for
those); the turn waits in state ``waiting_approval`` until someone answers or the turn is
stopped. An "allow for this turn" answer holds until the turn ends. The answers go to the
model's working memory.
"""

from __future__ import annotations

from collections.abc import Callable

from ..records import ApprovalRequest
from .asking import ApprovalPath, Asking
from .plan import TurnPlan
from .shared_turn import LiveTurn


class TurnSlot:
    """A turn's request is shown in its live state (``waiting_approval`` while it waits)."""

    def __init__(self, live: LiveTurn) -> None:
        self._live = live

    async def show(self, approval: ApprovalRequest) -> None:
        await self._live.set_approval(approval, state="waiting_approval")

    async def hide(self, answered: bool) -> None:
        # Given up (the turn was stopped): the end of the turn sets its state.
        await self._live.set_approval(None, state="running" if answered else None)


def turn_allowance(turn_id: str) -> tuple[str, str]:
    """What a turn's "allow for this turn" is remembered under (forgotten when it ends)."""
    return ("turn", turn_id)


class TurnPermission:
    """Asks, under the turn's approval policy, whether cells may run."""

    def __init__(
        self,
        plan: TurnPlan,
        approvals: ApprovalPath,
        live: LiveTurn,
        record: Callable[..., None],
    ) -> None:
        self.notes: list[str] = []
        """Who allowed or denied what, oldest first (the model's working memory)."""
        self._plan = plan
        self._approvals = approvals
        self._slot = TurnSlot(live)
        self._record = record

    async def ask(self, cell_ids: list[str], sources: dict[str, str]) -> tuple[bool, str, str]:
        """``(True, "", approval)`` if the cells may run, else ``(False, why, approval)``;
        ``approval``: the id of the approval a person answered ("" if none was asked)."""
        plan = self._plan
        answer = await self._approvals.ask(
            Asking(
                room_id=plan.room_id,
                turn_id=plan.turn_id,
                cell_ids=tuple(cell_ids),
                sources=sources,
                policy=plan.policy,
                slot=self._slot,
                record=self._record,
                allowance=turn_allowance(plan.turn_id),
            )
        )
        if answer.by is not None:
            verb = "allowed" if answer.allowed else "denied"
            self.notes.append(f"{answer.by} {verb} running {', '.join(cell_ids)}")
        return answer.allowed, answer.reason, answer.approval_id
