"""The one way any agent asks a person to run cells: a turn of the panel, or an MCP client.

Policy (``never``, ``always``, ``ask``, ``turn``), the allowance an "allow for this turn"
answer leaves, the request (masked sources and their hashes, who asks), the desk a tab's
answer reaches, the journal and the answer are the same for both; what differs is passed
in: where the request is shown (:class:`ApprovalSlot`: the turn's live state, or the
notebook's approval slot for an external client), how long to wait (a turn waits until it
is stopped; a client at most ``timeout`` seconds) and the allowance's key (the turn, or
the principal and the session the server minted; none: nothing is remembered), and
whether the asking person can also be asked where they are (:class:`DirectPrompt`: an MCP
client's elicitation, where the administrator lets an approval be answered), in which case
the first answer wins, from a tab or from there. The journal says where each answer was
given (``answered_in``: a tab, the terminal client, the MCP client's form).
Rejected: one copy per channel, which is how an allowance came to be keyed by a header in
one of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Protocol

from ..document import source_hash
from ..errors import Conflict, NotFound
from ..records import ApprovalRequest
from ..secrets import SecretMasker
from .approvals import ApprovalDesk
from .payloads import AnsweredIn, ApprovalAnswer, Decision
from .store import new_id, now_iso


class ApprovalSlot(Protocol):
    """Where a request is shown to people, and taken down once answered (or given up).

    ``show`` may refuse (raise) when the slot is taken; nothing is asked then."""

    async def show(self, approval: ApprovalRequest) -> None: ...

    async def hide(self, answered: bool) -> None: ...


@dataclass(frozen=True)
class DirectPrompt:
    """The person behind the requester, asked where they are, beside what every tab shows:
    ``ask`` gives their decision on an approval, ``ask_input`` their answer to a cell's
    ``input()`` prompt (``(cell_id, prompt)``; see :mod:`.direct_inputs`), each ``None``
    when they gave none there (they dismissed it, or their client could not show it);
    ``by`` is how an answer is recorded. Whoever answers first decides; the other question
    is withdrawn."""

    ask: Callable[[ApprovalRequest], Awaitable[Decision | None]]
    by: str
    ask_input: Callable[[str, str], Awaitable[str | None]] | None = None
    answered_in: AnsweredIn = "mcp_client"
    """Where its answers are given, as the journal records it."""


@dataclass(frozen=True)
class Answer:
    """Whether the cells may run; why not; who answered (``None``: the policy did); the
    approval a person answered (``""``: none was asked), which the run's origin names."""

    allowed: bool
    reason: str = ""
    by: str | None = None
    approval_id: str = ""


@dataclass(frozen=True)
class Asking:
    """One request: which cells, on which notebook, for whom, and how it is shown."""

    room_id: str
    turn_id: str
    cell_ids: tuple[str, ...]
    sources: dict[str, str]
    policy: str
    slot: ApprovalSlot
    record: Callable[..., None]
    """Journals an action of this request (``approval_requested``, ``approval``)."""
    allowance: Hashable | None = None
    """What an "allow for this turn" answer is remembered under (None: not remembered)."""
    requested_by: str | None = None
    timeout: float | None = None
    direct: DirectPrompt | None = None


async def _take_down(slot: ApprovalSlot, answered: bool) -> None:
    """Take the request down from ``slot``, to the end even if the caller is cancelled.

    An MCP client that gives up (its read time-out sends a cancellation, or it closes the
    connection) cancels its call inside the SDK's anyio cancel scope, which cancels every
    later await of the call too: the clean-up itself. Unshielded, the card stayed in the
    notebook (every later agent run there was refused: "Another approval is waiting")
    while the desk had forgotten it (a tab's answer got a 404). Shielded, the take-down
    runs in a task of its own; the caller's cancellation still reaches the caller."""
    await asyncio.shield(asyncio.ensure_future(slot.hide(answered)))


class ApprovalPath:
    """Asks for permission to run cells (see the module docstring); one per server."""

    def __init__(self, desk: ApprovalDesk, masker: SecretMasker | None) -> None:
        self._desk = desk
        self._masker = masker
        self._allowed: set[Hashable] = set()

    def will_ask(self, policy: str, allowance: Hashable | None) -> bool:
        """Whether a request under ``policy`` would wait for a person's answer now."""
        if policy in ("never", "always"):
            return False
        return allowance is None or allowance not in self._allowed

    def forget(self, allowance: Hashable) -> None:
        """The turn or session an allowance was for has ended."""
        self._allowed.discard(allowance)

    async def ask(self, asking: Asking) -> Answer:
        if asking.policy == "never":
            return Answer(False, "running cells is switched off (approval policy 'never').")
        if not self.will_ask(asking.policy, asking.allowance):
            return Answer(True)
        shown = self._masker.mask_value(asking.sources) if self._masker else asking.sources
        approval = ApprovalRequest(
            id=new_id("a"),
            turn_id=asking.turn_id,
            cell_ids=asking.cell_ids,
            sources=shown,
            source_hashes={cell_id: source_hash(s) for cell_id, s in asking.sources.items()},
            requested_at=now_iso(),
            requested_by=asking.requested_by,
        )
        await asking.slot.show(approval)
        # No await between showing and opening: an answer cannot come before the desk has it.
        waiting = self._desk.open(
            approval.id, asking.room_id, asking.turn_id, approval.source_hashes
        )
        asking.record("approval_requested", approval_id=approval.id, cell_ids=asking.cell_ids)
        direct = (
            None
            if asking.direct is None
            else asyncio.ensure_future(self._ask_directly(asking, asking.direct, approval))
        )
        try:
            decision, by, where = await asyncio.wait_for(asyncio.shield(waiting), asking.timeout)
        except asyncio.TimeoutError:
            self._desk.withdraw(approval.id)
            await _take_down(asking.slot, answered=False)
            return Answer(False, f"nobody answered the approval within {asking.timeout:g} s.")
        except asyncio.CancelledError:  # the turn was stopped, or the client gave up
            self._desk.withdraw(approval.id)
            await _take_down(asking.slot, answered=False)
            raise
        finally:
            if direct is not None:  # answered in a tab (or given up): stop asking there
                direct.cancel()
        await _take_down(asking.slot, answered=True)
        asking.record(
            "approval",
            approval_id=approval.id,
            decision=decision,
            answered_by=by,
            answered_in=where,
        )
        cells = ", ".join(asking.cell_ids)
        if decision == "deny":
            return Answer(False, f"{by} denied running {cells}.", by, approval.id)
        if (decision == "turn" or asking.policy == "turn") and asking.allowance is not None:
            self._allowed.add(asking.allowance)
        return Answer(True, "", by, approval.id)

    async def _ask_directly(
        self, asking: Asking, direct: DirectPrompt, approval: ApprovalRequest
    ) -> None:
        """Hand the person's answer to the desk, as a tab's answer is handed over REST."""
        decision = await direct.ask(approval)
        if decision is None:  # no answer there: a tab may still give one
            return
        answer = ApprovalAnswer("", decision, approval.source_hashes, direct.answered_in)
        try:
            self._desk.answer(approval.id, asking.room_id, answer, direct.by)
        except (Conflict, NotFound):  # a tab answered first, or the wait was given up
            pass
