"""Who calls jupyter-loop from outside JupyterLab (an MCP client, the terminal client), and
how its own words about itself are made fit to show and to journal."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from .asking import DirectPrompt

CLAIM_CHARS = 60
"""A client's name for itself is cut to this (a 1 MB name would be journaled at every call)."""
DETAIL_CHARS = 200


@dataclass(frozen=True)
class Caller:
    """Who calls: the Jupyter user (as people know them), the client program (MCP
    ``clientInfo`` name), its connection (an MCP session id the server minted for this
    principal, ``""`` when there is none) and the principal (who holds the credential,
    :func:`jupyter_loop.access.identity.principal_of`). An "allow for the turn" answer holds for
    that principal on that connection, as long as it lasts; without a connection, for the
    one call. ``direct``: how to ask the caller's person for an approval in their client
    (MCP elicitation), when it can. ``agent``: the ACP agent the server started for this
    person and whose token the call carries (its label; the server's word, so it is shown
    as a name, not as a claim), ``""`` for any other client."""

    user: str
    client: str
    connection: str = ""
    principal: str = ""
    direct: DirectPrompt | None = field(default=None, compare=False, repr=False)
    agent: str = ""

    @property
    def label(self) -> str:
        """Who asks, as people are shown it: the client's name is only what it says of itself
        (rejected: the bare name, which can read "JupyterLab tab of alice (approved)"); an
        ACP agent the server started is named as the server knows it.

        >>> Caller("ada", "mcp", agent="Qwen Code").label
        'Qwen Code for ada'
        """
        if self.agent:
            return f"{self.agent} for {self.user}"
        claim = f', calling itself "{self.client}"' if self.client else ""
        return f"an MCP client of {self.user}{claim}"

    @property
    def shown_as(self) -> str:
        """Its name at work in the notebook's tabs: the program, and whose it is ("for"
        names the user the server knows, whatever the program calls itself).

        >>> Caller("ada", "claude-code").shown_as, Caller("ada", "").shown_as
        ('claude-code for ada', 'an MCP client for ada')
        """
        if self.agent:
            return self.label
        return f"{self.client or 'an MCP client'} for {self.user}"

    def session_in(self, room_id: str) -> str:
        """The ``x…`` turn id of this caller's proposals in a notebook: one per client and
        notebook, so a client sees the status of its own proposals."""
        digest = hashlib.sha256(f"{self.label}\0{room_id}".encode()).hexdigest()[:16]
        return f"x{digest}"


def client_claim(name: Any) -> str:
    r"""A client's name for itself, fit to show: controls dropped, one line, capped.

    Example:
        >>> client_claim("claude-code")
        'claude-code'
        >>> client_claim("tab of alice\x1b[2J\n(approved)" + "x" * 99)
        'tab of alice [2J (approved)xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…'
    """
    text = "".join(ch if ch.isprintable() else " " for ch in str(name)[: CLAIM_CHARS * 4])
    return capped(" ".join(text.split()), CLAIM_CHARS)


def capped(text: str, limit: int = DETAIL_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the cut marked."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
