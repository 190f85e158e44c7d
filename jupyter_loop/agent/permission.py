"""Whether a turn may run cells: its approval policy, and a person's answer from any tab.

A request shows the sources it asks to run (and their hashes: an answer holds only for
those); the turn waits in state ``waiting_approval`` until someone answers or the turn is
stopped. The answers go to the model's working memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..document import source_hash
from ..records import ApprovalRequest
from .approvals import ApprovalDesk
from .live import LiveTurn
from .plan import TurnPlan
from .store import new_id, now_iso


class TurnPermission:
    """Asks, under the turn's approval policy, whether cells may run."""

    def __init__(
        self,
        plan: TurnPlan,
        desk: ApprovalDesk,
        live: LiveTurn,
        record: Callable[..., None],
    ) -> None:
        self.notes: list[str] = []
        """Who allowed or denied what, oldest first (the model's working memory)."""
        self._plan = plan
        self._desk = desk
        self._live = live
        self._record = record
        self._allowed_for_turn = plan.policy == "always"

    async def ask(self, cell_ids: list[str], sources: dict[str, str]) -> tuple[bool, str]:
        """``(True, "")`` if the cells may run, else ``(False, why)``."""
        plan = self._plan
        cells = ", ".join(cell_ids)
        if plan.policy == "never":
            return False, "running cells is switched off (approval policy 'never')."
        if self._allowed_for_turn:
            return True, ""
        approval = ApprovalRequest(
            id=new_id("a"),
            turn_id=plan.turn_id,
            cell_ids=tuple(cell_ids),
            sources=sources,
            source_hashes={cell_id: source_hash(source) for cell_id, source in sources.items()},
            requested_at=now_iso(),
        )
        approval_id = approval.id
        waiting = self._desk.open(approval_id, plan.room_id, plan.turn_id, approval.source_hashes)
        self._record("approval_requested", approval_id=approval_id, cell_ids=cell_ids)
        try:
            await self._live.set_approval(approval, state="waiting_approval")
            decision, by = await waiting
        except asyncio.CancelledError:
            self._desk.withdraw(approval_id)
            await self._live.set_approval(None)  # the end of the turn sets its state
            raise
        await self._live.set_approval(None, state="running")
        self._record("approval", approval_id=approval_id, decision=decision, answered_by=by)
        if decision == "deny":
            self.notes.append(f"{by} denied running {cells}")
            return False, f"{by} denied running {cells}."
        if decision == "turn" or plan.policy == "turn":
            self._allowed_for_turn = True
        self.notes.append(f"{by} allowed running {cells}")
        return True, ""
