"""Permission to run cells: pending approvals as futures, answered over REST from any tab.

Example:
    >>> import asyncio
    >>> async def demo():
    ...     desk = ApprovalDesk()
    ...     waiting = desk.open("a1", "room", "t1", {"c1": "9f86d0"})
    ...     desk.answer("a1", "room", ApprovalAnswer("a.ipynb", "once", {"c1": "9f86d0"}), "ada")
    ...     return await waiting
    >>> asyncio.run(demo())
    ('once', 'ada', 'tab')
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ..errors import Conflict, NotFound
from .payloads import ApprovalAnswer


@dataclass(frozen=True)
class _Pending:
    room_id: str
    turn_id: str
    source_hashes: dict[str, str]
    future: asyncio.Future[tuple[str, str, str]]


class ApprovalDesk:
    """The approvals turns are waiting for (and those answered, until their turn ends)."""

    def __init__(self) -> None:
        self._approvals: dict[str, _Pending] = {}

    def open(
        self, approval_id: str, room_id: str, turn_id: str, source_hashes: dict[str, str]
    ) -> asyncio.Future[tuple[str, str, str]]:
        """A future resolved with ``(decision, by, answered_in)`` when someone answers.

        ``source_hashes``: the hashes of the sources the request shows.
        """
        future: asyncio.Future[tuple[str, str, str]] = asyncio.get_running_loop().create_future()
        self._approvals[approval_id] = _Pending(room_id, turn_id, dict(source_hashes), future)
        return future

    def answer(self, approval_id: str, room_id: str, answer: ApprovalAnswer, by: str) -> None:
        """Answer a pending approval.

        Raises:
            NotFound: No such approval on this notebook.
            Conflict: It was already answered, or its turn stopped waiting, or the answer
                was given to other sources than those of the request.
        """
        pending = self._approvals.get(approval_id)
        if pending is None or pending.room_id != room_id:
            raise NotFound(f"No approval with id '{approval_id}' on this notebook.")
        if pending.future.done():
            raise Conflict("This approval was already answered.")
        seen = answer.source_hashes
        if seen is not None and seen != pending.source_hashes:
            raise Conflict("These are not the sources the agent asks to run; look again.")
        pending.future.set_result((answer.decision, by, answer.answered_in))

    def withdraw(self, approval_id: str) -> None:
        """The turn stopped waiting (it was stopped): later answers get a 409."""
        pending = self._approvals.get(approval_id)
        if pending is not None and not pending.future.done():
            pending.future.cancel()

    def forget_turn(self, turn_id: str) -> None:
        for approval_id, pending in list(self._approvals.items()):
            if pending.turn_id == turn_id:
                pending.future.cancel()
                del self._approvals[approval_id]

    def waiting(self) -> list[tuple[str, str]]:
        """``(approval_id, room_id)`` of the approvals nobody has answered yet, oldest
        first: what ``GET status`` lists, so a terminal can find the id to answer."""
        return [
            (approval_id, pending.room_id)
            for approval_id, pending in self._approvals.items()
            if not pending.future.done()
        ]
