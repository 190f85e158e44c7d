"""Every record the server writes into the shared document, defined once.

Each dataclass mirrors one interface of ``src/payloads.ts`` (named in ``TS``); a test parses
that file and checks that the two agree field by field (name, optional, nullable). A field
with a default is optional in TypeScript (``name?:``); a field listed in ``NULLABLE`` is
written as ``null`` when it is None, any other None field is left out of the record.

Numbers: the shared document has one number type (a JavaScript number), so a Y client in
Python reads ``25`` back as ``25.0``; :func:`counts` turns counts read back into ints.

Example:
    >>> CellMarker(state="done", run_id="r1", status="ok").to_y()
    {'state': 'done', 'run_id': 'r1', 'status': 'ok'}
    >>> TurnRecord.from_y({"id": "t", "state": "done", "model": "m", "provider": "openai",
    ...     "started_at": "x", "steps": 25.0, "usage": {"input_tokens": 3.0,
    ...     "output_tokens": 1.0}}).steps
    25
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from pycrdt import Map, Text


class Record:
    """A plain record of the shared document (mixin for frozen dataclasses)."""

    TS: ClassVar[str]
    NULLABLE: ClassVar[frozenset[str]] = frozenset()

    def to_y(self) -> dict[str, Any]:
        """The value to store: nested records as plain dicts, None left out unless nullable."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.name not in self.NULLABLE:
                continue
            out[f.name] = _plain(value)
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_y()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def counts(value: Any) -> int:
    """A count read back from the document (a float there) as an int."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


# -- execution: the map ``jupyter_loop:execution``, keyed by cell id ------------------------


@dataclass(frozen=True)
class InputRequest(Record):
    """A pending ``input()`` prompt of a running cell."""

    TS = "IInputRequest"
    request_id: str
    prompt: str
    password: bool


@dataclass(frozen=True)
class CellMarker(Record):
    """The server's marker for a cell: queued, running, or how its last run ended."""

    TS = "ICellMarker"
    state: str
    run_id: str
    kernel_id: str | None = None
    by: str | None = None
    status: str | None = None
    note: str | None = None
    input: InputRequest | None = None

    @classmethod
    def from_y(cls, value: dict[str, Any]) -> CellMarker:
        request = value.get("input")
        return cls(
            state=str(value.get("state", "")),
            run_id=str(value.get("run_id", "")),
            kernel_id=value.get("kernel_id"),
            by=value.get("by"),
            status=value.get("status"),
            note=value.get("note"),
            input=InputRequest(**request) if isinstance(request, dict) else None,
        )


# -- the agent: the map ``jupyter_loop:agent`` ---------------------------------------------


@dataclass(frozen=True)
class TokenUsage(Record):
    TS = "ITokenUsage"
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class TurnRecord(Record):
    """The current or last turn (``turn``); also kept in the conversation store."""

    TS = "IAgentTurn"
    NULLABLE = frozenset({"ended_at", "error", "usage"})
    id: str
    state: str
    model: str
    provider: str
    started_at: str
    started_by: str | None = None
    ended_at: str | None = None
    error: str | None = None
    usage: TokenUsage | None = None
    steps: int = 0
    approval: str | None = None

    @classmethod
    def from_y(cls, value: dict[str, Any]) -> TurnRecord:
        """Read a turn back (from the document or the store); counts become ints."""
        usage = value.get("usage")
        return cls(
            id=str(value["id"]),
            state=str(value["state"]),
            model=str(value.get("model", "")),
            provider=str(value.get("provider", "")),
            started_at=str(value.get("started_at", "")),
            started_by=value.get("started_by"),
            ended_at=value.get("ended_at"),
            error=value.get("error"),
            usage=TokenUsage(counts(usage.get("input_tokens")), counts(usage.get("output_tokens")))
            if isinstance(usage, dict)
            else None,
            steps=counts(value.get("steps")),
            approval=value.get("approval"),
        )


@dataclass(frozen=True)
class UserEntry(Record):
    TS = "ILiveUserEntry"
    id: str
    kind: str
    text: str
    by: str | None = None


@dataclass(frozen=True)
class AssistantEntry(Record):
    """Streamed text: stored as a Y.Text the server appends to (see :meth:`to_y`)."""

    TS = "ILiveAssistantEntry"
    id: str
    kind: str
    text: str

    def to_y(self) -> dict[str, Any]:
        return {**super().to_y(), "text": Text(self.text)}


@dataclass(frozen=True)
class ToolEntry(Record):
    TS = "ILiveToolEntry"
    id: str
    kind: str
    name: str
    summary: str
    detail: str | None = None
    ok: bool | None = None
    cell_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class NoticeEntry(Record):
    TS = "ILiveNoticeEntry"
    id: str
    kind: str
    text: str
    level: str


@dataclass(frozen=True)
class ThoughtEntry(Record):
    """What an ACP agent thought aloud (``agent_thought_chunk``), whole: shown collapsed."""

    TS = "ILiveThoughtEntry"
    id: str
    kind: str
    text: str


LIVE_ENTRIES: dict[str, Callable[..., Record]] = {
    "user": UserEntry,
    "thought": ThoughtEntry,
    "assistant": AssistantEntry,
    "tool": ToolEntry,
    "notice": NoticeEntry,
}


def live_entry(kind: str, entry_id: str, **fields_: Any) -> Map:
    """An entry of ``live`` as the Y.Map to append; unknown kinds or fields raise TypeError."""
    record_type = LIVE_ENTRIES[kind]
    if "cell_ids" in fields_:
        fields_["cell_ids"] = tuple(fields_["cell_ids"])
    record = record_type(id=entry_id, kind=kind, **fields_)
    return Map(record.to_y())


@dataclass(frozen=True)
class ApprovalRequest(Record):
    """The agent waits for permission to run cells (``approval``).

    ``source_hashes``: :func:`source_hash` of each cell's source as shown; the answer sends
    them back and only those sources run.
    """

    TS = "IApprovalRequest"
    id: str
    turn_id: str
    cell_ids: tuple[str, ...]
    sources: dict[str, str]
    source_hashes: dict[str, str]
    requested_at: str | None = None
    requested_by: str | None = None  # an external client or an ACP agent, not our turn

    @classmethod
    def from_y(cls, value: dict[str, Any]) -> ApprovalRequest:
        """Read an approval back from the document (lists become tuples).

        >>> asked = ApprovalRequest("a1", "t1", ("c0",), {"c0": "1"}, {"c0": "h"})
        >>> ApprovalRequest.from_y(asked.to_y()) == asked
        True
        """
        return cls(
            id=str(value["id"]),
            turn_id=str(value.get("turn_id", "")),
            cell_ids=tuple(str(c) for c in value.get("cell_ids") or ()),
            sources={str(k): str(v) for k, v in (value.get("sources") or {}).items()},
            source_hashes={str(k): str(v) for k, v in (value.get("source_hashes") or {}).items()},
            requested_at=value.get("requested_at"),
            requested_by=value.get("requested_by"),
        )


# -- proposals: the map ``jupyter_loop:proposals``, keyed by proposal id --------------------


@dataclass(frozen=True)
class Proposal(Record):
    """A proposed cell edit (``kind`` insert, modify, delete; ``outputs``, outputs put
    back from the History view; or ``version``, a kept version of the whole notebook put
    back over the open notebook). ``claim``: the token of the tab that applied it (accepted).
    ``origin``: who proposes it: an agent (the assistant, an outside agent), or a tab that
    came back from offline with edits of cells its file's reload changed (``offline``)."""

    TS = "IProposal"
    NULLABLE = frozenset(
        {"cell_id", "cell_type", "base_source", "new_source", "resolved_by", "resolved_at"}
        | {"new_cell_id", "claim", "new_outputs", "base_outputs", "version", "new_notebook"}
    )
    id: str
    turn_id: str
    kind: str
    cell_id: str | None
    status: str
    cell_type: str | None = None
    base_source: str | None = None
    new_source: str | None = None
    summary: str = ""
    created_at: str | None = None
    resolved_by: str | None = None
    resolved_at: str | None = None
    new_cell_id: str | None = None
    claim: str | None = None
    origin: str = "agent"
    new_outputs: str | None = None
    """``outputs`` proposals: the cell's outputs to put back, as nbformat JSON text (a
    string, not nested shared maps: a proposal is read whole, never edited)."""
    base_outputs: str | None = None
    """``outputs`` proposals, once accepted: the outputs they replaced (what an undo puts
    back), as nbformat JSON text."""
    version: int | None = None
    """``version`` proposals: the number of the kept version (``jupyter loop versions``)."""
    new_notebook: str | None = None
    """``version`` proposals while pending: that version's notebook, as nbformat JSON text;
    cleared when the proposal is resolved, so the document does not keep a second copy."""

    @classmethod
    def from_y(cls, value: dict[str, Any]) -> Proposal:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in value.items() if k in names})


# -- presence: each tab's field in the notebook's awareness (not in the document) ---------

FOCUS_FIELD = "jupyter_loop_focus"
"""The awareness field where a tab says which cell its person has focused and selected."""


@dataclass(frozen=True)
class CellFocus(Record):
    """The cell a person's tab has active and the cells selected with it (in notebook
    order; the active one among them). Read from any client's awareness, so it is
    checked field by field and anything else is dropped.

    >>> CellFocus.from_json({"cell_id": "c2", "selected_cell_ids": ["c2", "c3", 7]})
    CellFocus(cell_id='c2', selected_cell_ids=('c2', 'c3'))
    >>> CellFocus.from_json("nonsense") is None
    True
    """

    TS = "ICellFocus"
    NULLABLE = frozenset({"cell_id"})
    cell_id: str | None
    selected_cell_ids: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, value: Any) -> CellFocus | None:
        if not isinstance(value, dict):
            return None
        cell_id = value.get("cell_id")
        selected = value.get("selected_cell_ids")
        return cls(
            cell_id if isinstance(cell_id, str) and cell_id else None,
            tuple(c for c in selected if isinstance(c, str) and c)[:200]
            if isinstance(selected, list)
            else (),
        )


AGENT_FIELD = "jupyter_loop_agent"
"""The awareness field of an agent at work in the notebook (the server publishes it)."""


@dataclass(frozen=True)
class AgentAtWork(Record):
    """What an agent (the panel's assistant, an MCP client, the terminal client) is doing
    in the notebook, shown on the cell it names; its name and colour are the awareness
    state's ``user``, as a person's are."""

    TS = "IAgentAtWork"
    NULLABLE = frozenset({"cell_id"})
    cell_id: str | None
    action: str


RECORDS: tuple[type[Record], ...] = (
    InputRequest,
    CellMarker,
    TokenUsage,
    TurnRecord,
    UserEntry,
    AssistantEntry,
    ToolEntry,
    NoticeEntry,
    ApprovalRequest,
    Proposal,
    CellFocus,
    AgentAtWork,
)
"""Every record type, for the test that compares them with ``src/payloads.ts``."""
