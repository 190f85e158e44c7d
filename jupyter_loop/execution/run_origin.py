"""Who started a run and through which channel, and the record a run leaves in the history.

The channel is what the server knows (the runs socket of a tab, ``POST runs``, a turn of
the assistant, an MCP client); a client may add what only it knows (that a request is a
Run All, that it is the terminal client). Those claims are labels, never rights: the
rights were checked on the channel.

Example:
    >>> RunOrigin("alice", TAB).describe()
    'a tab of alice'
    >>> RunOrigin("alice", ASSISTANT, turn="t1", approval="a9").describe()
    "the assistant's turn t1 asked by alice (approval a9)"
    >>> RunOrigin("bob", MCP, client="claude", run_all=True).describe()
    'MCP client "claude" for bob, Run All'
    >>> RunOrigin("ada", ACP, client="Qwen Code").describe()
    'Qwen Code for ada'
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pycrdt import Map

from ..document import source_hash

if TYPE_CHECKING:  # a circle for types only, kept on purpose (tests/project/test_imports.py)
    from ..secrets import SecretMasker
    from .run import CellJob, CellRun, RunOutcome

TAB = "tab"
RUNS_API = "runs_api"
ASSISTANT = "assistant"
MCP = "mcp"
TERMINAL = "terminal"
ACP = "acp"
"""An ACP agent the server started, through the MCP endpoint with its session's token:
``client`` is then the agent's label as configured on the server, not a claim."""
CHANNELS = (TAB, RUNS_API, ASSISTANT, MCP, TERMINAL, ACP)

CLIENT_CLAIMS = ("run_all", "terminal")
"""What a ``POST runs`` or runs-socket request may say of itself (``started_from``)."""


@dataclass(frozen=True)
class RunOrigin:
    """Who started a run: the user it ran for, the channel, and the channel's details
    (the assistant's turn and approval, the MCP client's name for itself)."""

    user: str
    channel: str
    turn: str = ""
    approval: str = ""
    client: str = ""
    run_all: bool = False

    def describe(self) -> str:
        if self.channel == ASSISTANT:
            said = f"the assistant's turn {self.turn or '?'} asked by {self.user}"
            said += f" (approval {self.approval})" if self.approval else ""
        elif self.channel == MCP:
            said = f'MCP client "{self.client}" for {self.user}'
        elif self.channel == ACP:
            said = f"{self.client} for {self.user}"
        elif self.channel == TERMINAL:
            said = f"the terminal client for {self.user}"
        elif self.channel == RUNS_API:
            said = f"the runs API for {self.user}"
        else:
            said = f"a tab of {self.user}"
        return said + (", Run All" if self.run_all else "")

    @property
    def fields(self) -> dict[str, Any]:
        """The origin as the run ledger lists it beside a run in flight (plain values)."""
        return {
            "by": self.user, "channel": self.channel, "turn": self.turn,
            "approval": self.approval, "client": self.client, "run_all": self.run_all,
        }  # fmt: skip

    def claimed(self, started_from: str | None) -> RunOrigin:
        """This origin with a client's claim (``run_all``, ``terminal``) applied."""
        if started_from == "run_all":
            return RunOrigin(self.user, self.channel, run_all=True)
        if started_from == "terminal":
            return RunOrigin(self.user, TERMINAL)
        return self


@dataclass(frozen=True)
class KeptSource:
    """A run's source as every record of the run keeps it: ``text`` masked whole, and
    ``hash`` (what the stale marks compare with the cell's source now). Made once, by
    :func:`kept_source`, for the ledger of runs in flight and for the history alike, so a
    run taken over after a restart keeps the record it was asked and started with."""

    hash: str
    text: str


def kept_source(source: str, masker: SecretMasker | None) -> KeptSource:
    """``source`` as the records keep it (see :class:`KeptSource`).

    Example:
        >>> kept_source("x = 1", None).text
        'x = 1'
    """
    return KeptSource(source_hash(source), masker.mask(source) if masker is not None else source)


@dataclass(frozen=True)
class RunEntry:
    """One ended run, as the history keeps it. ``source`` is masked; times are seconds
    since the epoch (``started`` is ``None`` for a run dropped before the kernel had it).

    ``source_hash`` is the hash of the source that ran, unmasked: the server compares it
    with a cell's source now (stale marks) and with ``source`` (a source that held a
    secret is not restored). It never leaves the server: beside the masked text, the hash
    of the unmasked one would confirm a guessed secret offline. What is sent is
    :attr:`shown_hash`, the hash of the text shown. Rejected: a hash keyed with a server
    secret, which would need a key kept as long as the history (lost or rotated, every
    stale mark would be wrong) for no gain: a client can compare the shown hash with the
    hash of a cell's source, equal when no secret was masked, as before.

    ``taken_over``: a server started after the one that started the run (which died or
    stopped while the run went on, on a kept kernel) followed the run to its end."""

    room_id: str
    path: str
    cell_id: str
    run_id: str
    origin: RunOrigin
    source_hash: str
    source: str
    kernel_id: str
    kernel_run: str  # which start of the kernel (its id survives restarts): see KernelLine
    queued: float
    started: float | None
    ended: float
    status: str
    note: str | None = None
    execution_count: int | None = None
    outputs_digest: str = ""
    taken_over: bool = False

    @property
    def shown_hash(self) -> str:
        """The hash of ``source`` as shown (masked): what clients are given."""
        return source_hash(self.source)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "cell_id": self.cell_id,
            "run_id": self.run_id,
            "by": self.origin.describe(),
            "user": self.origin.user,
            "channel": self.origin.channel,
            "turn": self.origin.turn or None,
            "approval": self.origin.approval or None,
            "client": self.origin.client or None,
            "run_all": self.origin.run_all,
            "source_hash": self.shown_hash,
            "source": self.source,
            "kernel_id": self.kernel_id,
            "kernel_run": self.kernel_run,
            "queued": self.queued,
            "started": self.started,
            "ended": self.ended,
            "status": self.status,
            "note": self.note,
            "execution_count": self.execution_count,
            "outputs_digest": self.outputs_digest,
            "taken_over": self.taken_over,
        }


@dataclass(frozen=True)
class LastRun:
    """What a cell's outputs came from: the last run the kernel had."""

    source_hash: str
    kernel_run: str


def stale_reason(last: LastRun | None, source_hash: str, kernel_run: str | None) -> str:
    """Why a cell's outputs are stale ("" if they are not, or nothing tells).
    ``kernel_run``: the start of the notebook's kernel now (``None``: no kernel runs).

    Example:
        >>> stale_reason(LastRun("h1", "k1"), "h2", "k1")
        'edited since this output'
        >>> stale_reason(LastRun("h1", "k1"), "h1", "k2")
        'kernel restarted since this output'
        >>> stale_reason(None, "h1", "k1")
        ''
    """
    if last is None:
        return ""
    if last.source_hash != source_hash:
        return "edited since this output"
    if kernel_run is not None and last.kernel_run != kernel_run:
        return "kernel restarted since this output"
    return ""


def entry_for(
    job: CellJob,
    outcome: RunOutcome,
    run: CellRun | None,
    path: str,
    kernel_id: str,
    kernel_run: str,
    masker: SecretMasker | None,
) -> RunEntry:
    """The history's record of a settled run (``run`` is ``None`` for a cell dropped from
    the queue before it started): the source it ran, masked, and how it ended. A run
    taken over after a restart has no source in hand: the one its ledger line kept
    (``job.kept``) is the one it started with."""
    if run is not None and run.source is not None:
        source = kept_source(run.source, masker)
    elif job.kept is not None:
        source = job.kept
    else:
        source = kept_source(job.code, masker)
    return RunEntry(
        room_id=job.room_id,
        path=path,
        cell_id=job.cell_id,
        run_id=job.run_id,
        origin=job.origin or RunOrigin(job.by, "runs_api"),
        source_hash=source.hash,
        source=source.text,
        kernel_id=kernel_id,
        kernel_run=run.kernel_run if run is not None else kernel_run,
        queued=job.queued_at,
        started=run.started_at if run is not None else None,
        ended=time.time(),
        # The document shows an interrupt as the error it is; the history says so.
        status="interrupted" if run is not None and run.interrupted else outcome.status,
        note=outcome.note,
        execution_count=outcome.execution_count,
        outputs_digest=run.outputs_digest if run is not None else "",
        taken_over=run is not None and run.taken_over,
    )


def outputs_digest(ycell: Map) -> str:
    """A short hash of the cell's outputs as the run left them (masked, as written)."""
    outputs = ycell.get("outputs")
    value = outputs.to_py() if outputs is not None else []
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
