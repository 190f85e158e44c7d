"""REST payloads of the agent (``/api/jupyter-loop/agent/...``), checked at the edge.

Each request type has a ``from_json`` that raises :class:`~jupyter_loop.errors.BadRequest`
with a message naming the offending field; TypeScript mirrors live in ``src/payloads.ts`` and
the contract in ``docs/agent.md``.

Example:
    >>> TurnRequest.from_json({"path": "a.ipynb", "message": "why?"}).approval is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..cell_ids import is_cell_id
from ..errors import BadRequest
from ..providers import PROVIDER_KINDS

ApprovalPolicy = Literal["ask", "turn", "always", "never"]
APPROVAL_POLICIES: tuple[str, ...] = ("ask", "turn", "always", "never")
Decision = Literal["once", "turn", "deny"]
DECISIONS: tuple[str, ...] = ("once", "turn", "deny")
AnsweredIn = Literal["tab", "terminal", "mcp_client"]
"""Where a person answered an approval, as the journal says (``answered_in``)."""
ANSWERED_OVER_REST: tuple[str, ...] = ("tab", "terminal")
"""What a REST answer may say of itself; ``mcp_client`` is the server's own word for an
answer given in an MCP client's form (:mod:`jupyter_loop.mcp_server.elicitation`)."""
MAX_MESSAGE_CHARS = 100_000
MAX_FOCUS_CELLS = 50
BUILTIN_AGENT = "builtin"
"""``agent`` of a turn of the built-in assistant (the default); any other names an ACP agent."""
_AGENT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _string(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"'{key}' must be a non-empty string.")
    return value


def _optional_string(data: dict[str, Any], key: str) -> str | None:
    if data.get(key) is None:
        return None
    return _string(data, key)


def _choice(data: dict[str, Any], key: str, choices: tuple[str, ...]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if value not in choices:
        raise BadRequest(f"'{key}' must be one of {', '.join(choices)}.")
    return str(value)


def _positive_int(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadRequest(f"'{key}' must be a positive integer.")
    return value


@dataclass(frozen=True)
class TurnRequest:
    """``POST agent/turns``: start a turn on a notebook with the user's message."""

    path: str
    message: str
    model: str | None = None
    focus_cell_ids: tuple[str, ...] = ()
    approval: ApprovalPolicy | None = None
    provider: str | None = None
    max_steps: int | None = None
    active_cell_id: str | None = None
    """The cell active in the user's notebook view (shown to the model in full)."""
    agent: str | None = None
    """An ACP agent's name (``GET agents``); None or ``builtin``: the built-in assistant."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnRequest:
        message = _string(data, "message")
        if len(message) > MAX_MESSAGE_CHARS:
            raise BadRequest(f"'message' is longer than {MAX_MESSAGE_CHARS} characters.")
        focus = data.get("focus_cell_ids") or []
        if not isinstance(focus, list) or not all(is_cell_id(i) for i in focus):
            raise BadRequest("'focus_cell_ids' must be a list of cell ids.")
        if len(focus) > MAX_FOCUS_CELLS:
            raise BadRequest(f"'focus_cell_ids' lists more than {MAX_FOCUS_CELLS} cells.")
        return cls(
            path=_string(data, "path"),
            message=message,
            model=_optional_string(data, "model"),
            focus_cell_ids=tuple(dict.fromkeys(focus)),
            approval=cast("ApprovalPolicy | None", _choice(data, "approval", APPROVAL_POLICIES)),
            provider=_choice(data, "provider", PROVIDER_KINDS),
            max_steps=_positive_int(data, "max_steps"),
            active_cell_id=_optional_string(data, "active_cell_id"),
            agent=_agent(data),
        )


def _agent(data: dict[str, Any]) -> str | None:
    agent = _optional_string(data, "agent")
    if agent is None or agent == BUILTIN_AGENT:
        return None
    if not _AGENT_NAME.match(agent):
        raise BadRequest("'agent' must be an agent's name (GET agents lists them).")
    return agent


@dataclass(frozen=True)
class PathRequest:
    """A body naming only the notebook: ``stop`` and ``reject``."""

    path: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PathRequest:
        return cls(path=_string(data, "path"))


@dataclass(frozen=True)
class ApprovalAnswer:
    """``POST agent/approvals/{id}``: allow the cells once, for the rest of the turn, or not."""

    path: str
    decision: Decision
    source_hashes: dict[str, str] | None = None
    """The hashes of the request's sources, as the user saw them (the panel sends them)."""
    answered_in: AnsweredIn = "tab"
    """Where the person answered: ``terminal`` from ``jupyter loop``; only a record (the
    right to answer is the right to run, wherever it is used)."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ApprovalAnswer:
        decision = _choice(data, "decision", DECISIONS)
        if decision is None:
            raise BadRequest(f"'decision' must be one of {', '.join(DECISIONS)}.")
        hashes = data.get("source_hashes")
        if hashes is not None and not (
            isinstance(hashes, dict) and all(isinstance(v, str) for v in hashes.values())
        ):
            raise BadRequest("'source_hashes' must map cell ids to hash strings.")
        where = _choice(data, "answered_in", ANSWERED_OVER_REST) or "tab"
        return cls(
            path=_string(data, "path"),
            decision=cast("Decision", decision),
            source_hashes=hashes,
            answered_in=cast("AnsweredIn", where),
        )


def provider_choice(value: str | None) -> str | None:
    """A provider kind from a query argument (``GET models?provider=``)."""
    return _choice({"provider": value or None}, "provider", PROVIDER_KINDS)


def policy_or_default(value: str | None, default: str) -> ApprovalPolicy:
    """The turn's approval policy: its own, else the server's (checked)."""
    chosen = value or default
    if chosen not in APPROVAL_POLICIES:
        raise BadRequest(f"Unknown approval policy {chosen!r}.")
    return cast("ApprovalPolicy", chosen)
