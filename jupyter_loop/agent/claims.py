"""Claims on proposals: which one tab may apply a proposal, so that it is applied once.

A tab that accepts asks for a claim (REST). The server grants at most one live claim per
proposal; the tab with the claim applies the edit in its own document (so Ctrl-Z there
undoes it) and, in the same Y transaction, marks the proposal ``accepted`` with the claim's
token. A claim that is not used within ``CLAIM_SECONDS`` lapses: the proposal is still
pending (nothing was written) and the next claim is granted. No timer runs; a claim is only
looked at when someone asks.

Example:
    >>> desk = ClaimDesk(now=lambda: 0.0)
    >>> first = desk.grant("room", "p1", "ada")
    >>> desk.grant("room", "p1", "bob")
    Traceback (most recent call last):
    ...
    jupyter_loop.errors.Conflict: ada is accepting this proposal in another tab.
    >>> desk.used("room", "p1", first.token), desk.holder("room", "p1")
    (True, None)
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import Conflict

CLAIM_SECONDS = 30.0
"""How long a tab has to apply a proposal it claimed (its edit is one local transaction)."""


@dataclass(frozen=True)
class Claim:
    token: str
    by: str
    expires_at: float

    def to_json(self, now: float) -> dict[str, object]:
        return {"claim": self.token, "by": self.by, "expires_in": self.expires_at - now}


class ClaimDesk:
    """The live claims, by (room, proposal)."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._claims: dict[tuple[str, str], Claim] = {}

    def holder(self, room_id: str, proposal_id: str) -> Claim | None:
        """The live claim on a proposal, if any (a lapsed one is forgotten here)."""
        claim = self._claims.get((room_id, proposal_id))
        if claim is not None and claim.expires_at <= self._now():
            del self._claims[(room_id, proposal_id)]
            return None
        return claim

    def grant(self, room_id: str, proposal_id: str, by: str) -> Claim:
        """A new claim; the caller has checked that the proposal is pending and fresh.

        Raises:
            Conflict: Another tab holds a live claim.
        """
        held = self.holder(room_id, proposal_id)
        if held is not None:
            raise Conflict(f"{held.by} is accepting this proposal in another tab.")
        claim = Claim(secrets.token_hex(8), by, self._now() + CLAIM_SECONDS)
        self._claims[(room_id, proposal_id)] = claim
        return claim

    def used(self, room_id: str, proposal_id: str, token: str) -> bool:
        """The tab marked the proposal accepted with ``token``: forget the claim."""
        claim = self._claims.get((room_id, proposal_id))
        if claim is None or claim.token != token:
            return False
        del self._claims[(room_id, proposal_id)]
        return True
