"""Request and response payloads of running cells (REST and the runs socket), checked at the edge.

Each request type has a ``from_json`` that raises :class:`BadRequest` with a message
naming the offending field, so a handler never reads an untyped dict.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..cell_ids import check_cell_id
from ..errors import BadRequest


def _string(data: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise BadRequest(f"'{key}' must be a non-empty string.")
    return value


def _cell_id_list(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise BadRequest(f"'{key}' must be a non-empty list of cell ids.")
    for item in value:
        check_cell_id(item, key)
    if len(set(value)) != len(value):
        raise BadRequest(f"'{key}' lists the same cell more than once.")
    return tuple(value)


def _bool(data: dict[str, Any], key: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise BadRequest(f"'{key}' must be true or false.")
    return value


def cell_texts(
    data: dict[str, Any], key: str, cell_ids: tuple[str, ...], *, empty: bool
) -> dict[str, str] | None:
    """The optional map ``key`` of a request: a string for some of its cells
    (``source_hashes``: a hash, never empty; ``sources``: the source a tab shows).

    >>> cell_texts({"sources": {"c1": "1 + 1"}}, "sources", ("c1",), empty=True)
    {'c1': '1 + 1'}
    >>> cell_texts({}, "source_hashes", ("c1",), empty=False) is None
    True
    """
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(v, str) and (empty or v) for v in value.values()
    ):
        raise BadRequest(f"'{key}' must map cell ids to strings.")
    unknown = sorted(set(value) - set(cell_ids))
    if unknown:
        raise BadRequest(f"'{key}' names cells that are not in the request: {unknown}.")
    return dict(value)


STARTED_FROM = ("run_all", "terminal")


@dataclass(frozen=True)
class RunRequest:
    """Run these code cells of a notebook, in this order, on its kernel."""

    path: str
    cell_ids: tuple[str, ...]
    kernel_id: str | None = None
    record_timing: bool = False
    source_hashes: dict[str, str] | None = None
    """Run a cell only if its source still has this hash (what the user saw), else 409."""
    started_from: str | None = None
    """What the client says of the request for the run history: ``run_all`` or ``terminal``."""
    sources: dict[str, str] | None = None
    """The sources a tab shows: its last keystrokes may still be on their way (``tab_sources``)."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRequest:
        cell_ids = _cell_id_list(data, "cell_ids")
        started_from = _string(data, "started_from", required=False)
        if started_from is not None and started_from not in STARTED_FROM:
            raise BadRequest(f"'started_from' must be one of {', '.join(STARTED_FROM)}.")
        return cls(
            path=_string(data, "path") or "",
            cell_ids=cell_ids,
            kernel_id=_string(data, "kernel_id", required=False),
            record_timing=_bool(data, "record_timing", False),
            source_hashes=cell_texts(data, "source_hashes", cell_ids, empty=False),
            started_from=started_from,
            sources=cell_texts(data, "sources", cell_ids, empty=True),
        )


REQUEST_ID_LIMIT = 100


@dataclass(frozen=True)
class SocketRun:
    """A run request on the runs websocket: the body of ``POST runs`` as ``run``, and the
    ``request_id`` its answer carries (the tab matches answers to requests by it)."""

    request_id: str
    run: RunRequest

    @staticmethod
    def request_id_of(data: dict[str, Any]) -> str:
        """Read first, so that the answer to a malformed request still carries it."""
        request_id = _string(data, "request_id") or ""
        if len(request_id) > REQUEST_ID_LIMIT:
            raise BadRequest(f"'request_id' must be at most {REQUEST_ID_LIMIT} characters.")
        return request_id

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SocketRun:
        run = data.get("run")
        if not isinstance(run, dict):
            raise BadRequest("'run' must be a JSON object: what POST runs takes.")
        return cls(request_id=cls.request_id_of(data), run=RunRequest.from_json(run))


@dataclass(frozen=True)
class InputReply:
    """The answer to a pending ``input()`` prompt of a cell."""

    path: str
    cell_id: str
    request_id: str
    value: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> InputReply:
        value = data.get("value")
        if not isinstance(value, str):
            raise BadRequest("'value' must be a string.")
        return cls(
            path=_string(data, "path") or "",
            cell_id=check_cell_id(data.get("cell_id")),
            request_id=_string(data, "request_id") or "",
            value=value,
        )


@dataclass(frozen=True)
class QueuedCell:
    cell_id: str
    run_id: str
    state: str


@dataclass(frozen=True)
class RunTicket:
    """What a run request queued."""

    path: str
    kernel_id: str
    cells: tuple[QueuedCell, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
