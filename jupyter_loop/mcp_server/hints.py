"""What an MCP tool says of itself to hosts: the annotations they decide by.

Claude Code, for one, runs a tool marked read-only without asking its user, and hosts
show the title in their lists. Hints only: the rights are checked at every call whatever
they say (``refusals``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hints:
    """The MCP tool annotations a host decides by (Claude Code, for one, allows a read-only
    tool without asking). Hints only: the rights are checked at every call whatever they
    say."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


READS_ONLY = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)
PROPOSES = Hints(read_only=False, destructive=False, idempotent=False, open_world=False)
"""A proposal changes nothing until a person accepts it (a later one may replace it)."""
RUNS_CODE = Hints(read_only=False, destructive=True, idempotent=False, open_world=True)
"""A cell's code may do anything, reach anything."""
INTERRUPTS = Hints(read_only=False, destructive=True, idempotent=True, open_world=False)
"""Queued cells are dropped; interrupting twice is interrupting once."""
