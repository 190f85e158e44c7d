"""Accepting and rejecting the agent's proposals, and the journal of who decided.

A proposal is applied here (:meth:`ProposalDecisions.accept`, no tab involved) or by the one
tab that claimed it (:mod:`.claims`: applied there, it is undoable there); either way the
acceptance is journaled once, when its transaction reaches the server.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pycrdt import Map, Subscription

from ..document import CellNotFound, LiveDocuments, NotebookRef, writing
from ..errors import Conflict
from ..records import Proposal
from . import proposals
from .claims import Claim, ClaimDesk
from .journal import AgentJournal


class ProposalDecisions:
    """The users' answers to proposals, on any notebook."""

    def __init__(self, docs: LiveDocuments, journal: AgentJournal) -> None:
        self._docs = docs
        self._journal = journal
        self._claims = ClaimDesk()
        self._claim_watches: dict[tuple[str, str], tuple[Map, Subscription]] = {}

    def stop(self) -> None:
        """Stop watching for the claimed proposals' acceptance."""
        for key in list(self._claim_watches):
            self._unwatch(key)

    async def accept(self, proposal_id: str, path: str, user: str) -> dict[str, Any]:
        """Apply a proposal here (no tab involved) and record who accepted it."""
        room_id = await self._docs.room_id(path)
        async with self._docs.pinned(room_id):
            notebook = await self._docs.notebook(room_id)
            self._unclaimed(room_id, proposal_id)
            with writing(notebook):
                proposal = proposals.apply(notebook, proposal_id, user)
        self._record(room_id, proposal, "accept", user)
        return proposal.to_y()

    async def undo(self, proposal_id: str, path: str, user: str) -> dict[str, Any]:
        """Put back what an accepted outputs proposal replaced (``proposals.undo_outputs``)."""
        room_id = await self._docs.room_id(path)
        async with self._docs.pinned(room_id):
            notebook = await self._docs.notebook(room_id)
            with writing(notebook):
                try:
                    proposal = proposals.undo_outputs(notebook, proposal_id, user)
                except CellNotFound:
                    raise Conflict("The cell of this proposal is gone.") from None
        self._record(room_id, proposal, "undo", user)
        return proposal.to_y()

    async def claim(self, proposal_id: str, path: str, user: str) -> dict[str, Any]:
        """Let one tab apply a proposal itself (see ``claims``); 409 if another tab may."""
        room_id = await self._docs.room_id(path)
        notebook = await self._docs.notebook(room_id)
        proposals.acceptable(notebook, proposal_id)
        claim = self._claims.grant(room_id, proposal_id, user)
        self._watch_claim(notebook, room_id, proposal_id, claim)
        return claim.to_json(time.monotonic())

    async def reject(self, proposal_id: str, path: str, user: str) -> dict[str, Any]:
        room_id = await self._docs.room_id(path)
        async with self._docs.pinned(room_id):
            notebook = await self._docs.notebook(room_id)
            with writing(notebook):
                proposal = proposals.reject(notebook, proposal_id, user)
        self._record(room_id, proposal, "reject", user)
        return proposal.to_y()

    def _unclaimed(self, room_id: str, proposal_id: str) -> None:
        held = self._claims.holder(room_id, proposal_id)
        if held is not None:
            raise Conflict(f"{held.by} is accepting this proposal in another tab.")

    def _watch_claim(self, notebook: Any, room_id: str, proposal_id: str, claim: Claim) -> None:
        """Journal the acceptance when the claiming tab's transaction reaches the server."""
        key = (room_id, proposal_id)
        self._unwatch(key)
        ymap = proposals.proposals_map(notebook)

        def seen(event: Any) -> None:
            value = (event.keys.get(proposal_id) or {}).get("newValue")
            new = Proposal.from_y(value) if isinstance(value, dict) else None
            if new is None or new.claim != claim.token:
                return
            if new.status == "accepted" and self._claims.used(*key, claim.token):
                self._record(room_id, new, "accept", str(new.resolved_by))
            asyncio.get_running_loop().call_soon(self._unwatch, key)

        self._claim_watches[key] = (ymap, ymap.observe(seen))

    def _unwatch(self, key: tuple[str, str]) -> None:
        watch = self._claim_watches.pop(key, None)
        if watch is not None:
            watch[0].unobserve(watch[1])

    def _record(self, room_id: str, proposal: Proposal, action: str, user: str) -> None:
        self._journal.record(
            NotebookRef.of_room(room_id).file_id,
            proposal.turn_id,
            action,
            user,
            proposal_id=proposal.id,
            kind=proposal.kind,
            cell_id=proposal.cell_id,
            new_cell_id=proposal.new_cell_id,
        )
