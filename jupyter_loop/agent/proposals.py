"""Proposed cell edits, kept in the shared document (``jupyter_loop:proposals``).

Every tab sees a proposal appear and resolve live, and it survives tab close and reload.
A proposal records the source it was made against (``base_source``); once its cell has
changed (or is gone) it is *stale* and cannot be accepted. Accepting from a tab: the tab
gets a claim (``claims``) and applies the edit itself, so that its user can undo it with
Ctrl-Z; accepting over REST alone applies it here, as one transaction. Rejecting changes
only the proposal.

Functions that change the document are called inside a transaction with our origin.

Example:
    >>> from jupyter_ydoc import YNotebook
    >>> nb = YNotebook()
    >>> nb.append_cell({"id": "c0", "cell_type": "code", "source": "1/0", "metadata": {}})
    >>> p = create(nb, turn_id="t", kind="modify", cell_id="c0", new_source="1/1", summary="fix")
    >>> p.replaced
    ()
    >>> is_stale(nb, p.proposal), apply(nb, p.proposal.id, "ada").status
    (False, 'accepted')
    >>> str(nb.ycells[0]["source"])
    '1/1'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map

from ..document import CellNotFound, find_cell, set_source
from ..document.file_guards.offline_edits import OfflineEdit
from ..errors import BadRequest, Conflict, NotFound
from ..execution.outputs.writes import output_map
from ..records import Proposal
from .store import new_id, now_iso

PROPOSALS_MAP = "jupyter_loop:proposals"
KINDS = ("insert", "modify", "delete")
"""The kinds an agent may propose: edits of sources and cells."""
OUTPUTS = "outputs"
"""A proposal that puts back outputs a cell had (the History view's ``Restore these
outputs``). It leaves the source alone, and it goes stale only with its cell: outputs are
put back over whatever the cell shows, as the person who asked for them wants."""
VERSION = "version"
"""A proposal that puts a kept version of the whole notebook back (``jupyter loop
restore``, the versions view), over whatever the notebook holds: never stale. Accepted in
a tab it is one change of that tab's notebook, so undo there takes it back."""
CELL_TYPES = ("code", "markdown", "raw")
RESTORE_TURN = "history"
"""The ``turn_id`` of a proposal made from the History or versions view, or by ``jupyter
loop restore`` (no turn of the assistant's: the cards say who proposed it in their
summary)."""


def proposals_map(notebook: YNotebook) -> Map:
    return notebook.ydoc.get(PROPOSALS_MAP, type=Map)


@dataclass(frozen=True)
class Proposed:
    """A proposal just made, and the ids of the turn's pending proposals it replaced."""

    proposal: Proposal
    replaced: tuple[str, ...] = ()


def get(notebook: YNotebook, proposal_id: str) -> Proposal:
    value = proposals_map(notebook).get(proposal_id)
    if not isinstance(value, dict):
        raise NotFound(f"No proposal with id '{proposal_id}' in this notebook.")
    return Proposal.from_y(dict(value))


def of_turn(notebook: YNotebook, turn_id: str) -> list[Proposal]:
    """The proposals of a turn, oldest first."""
    values = [dict(v) for v in proposals_map(notebook).values() if isinstance(v, dict)]
    mine = [p for p in map(Proposal.from_y, values) if p.turn_id == turn_id]
    return sorted(mine, key=lambda p: p.created_at or "")


def _source(notebook: YNotebook, cell_id: str) -> str | None:
    try:
        _, ycell = find_cell(notebook, cell_id)
    except CellNotFound:
        return None
    return str(ycell.get("source", ""))


def create(
    notebook: YNotebook,
    *,
    turn_id: str,
    kind: str,
    cell_id: str | None,
    new_source: str | None = None,
    cell_type: str | None = None,
    summary: str = "",
    origin: str = "agent",
) -> Proposed:
    """Record a pending proposal against the cell as it is now.

    An edit or deletion of a cell replaces the turn's pending edit or deletion of that cell
    (the model changed its mind: one card per cell, not a pile); the ids it replaced come
    back with it.

    Raises:
        CellNotFound: The target (or the cell to insert after) does not exist.
    """
    if kind not in KINDS:
        raise BadRequest(f"Unknown proposal kind {kind!r}.")
    base = None
    if cell_id is not None:
        _, ycell = find_cell(notebook, cell_id)
        base = str(ycell.get("source", ""))
    proposal = Proposal(
        id=new_id("p"),
        turn_id=turn_id,
        kind=kind,
        cell_id=cell_id,
        cell_type=(cell_type or "code") if kind == "insert" else None,
        base_source=base if kind != "insert" else None,
        new_source=new_source if kind != "delete" else None,
        summary=summary,
        status="pending",
        origin=origin,
        created_at=now_iso("microseconds"),  # orders a turn's proposals
    )
    replaced = _replace_pending(notebook, turn_id, cell_id, kind) if kind != "insert" else []
    proposals_map(notebook)[proposal.id] = proposal.to_y()
    return Proposed(proposal, tuple(replaced))


def propose_outputs(
    notebook: YNotebook,
    *,
    turn_id: str,
    cell_id: str,
    outputs: list[dict[str, Any]],
    summary: str,
) -> Proposed:
    """Record a pending proposal to put ``outputs`` back into the cell; it replaces the
    turn's pending outputs proposal of that cell (not its source proposal).

    Raises:
        CellNotFound: The cell does not exist.
    """
    find_cell(notebook, cell_id)
    return _add_pending(
        notebook, turn_id, OUTPUTS, cell_id, new_outputs=json.dumps(outputs), summary=summary
    )


def propose_version(
    notebook: YNotebook, *, turn_id: str, number: int, content: dict[str, Any], summary: str
) -> Proposed:
    """Record a pending proposal to put version ``number`` (its notebook, ``content``)
    back; it replaces the turn's pending version proposal (one restore waits at a time)."""
    return _add_pending(
        notebook, turn_id, VERSION, None, version=number, new_notebook=json.dumps(content),
        summary=summary,
    )  # fmt: skip


def _add_pending(
    notebook: YNotebook, turn_id: str, kind: str, cell_id: str | None, **fields: Any
) -> Proposed:
    """Record a pending proposal that replaces the turn's pending one of ``kind`` for
    ``cell_id`` (see :func:`_replace_pending`)."""
    proposal = Proposal(
        id=new_id("p"),
        turn_id=turn_id,
        kind=kind,
        cell_id=cell_id,
        status="pending",
        created_at=now_iso("microseconds"),
        **fields,
    )
    replaced = _replace_pending(notebook, turn_id, cell_id, kind)
    proposals_map(notebook)[proposal.id] = proposal.to_y()
    return Proposed(proposal, tuple(replaced))


OFFLINE_SUMMARY = (
    "Typed in a tab while it was offline; the notebook's file was replaced meanwhile, "
    "so this was not merged"
)


def keep_offline_edits(notebook: YNotebook, edits: Sequence[OfflineEdit]) -> list[Proposal]:
    """Offer back what a returning tab changed in cells that were reloaded from the file
    while it was away (``file_guards.returning_tabs``): one proposal per cell, under one turn
    of their own, that a person accepts or rejects like the assistant's."""
    turn_id = new_id("offline")
    made = []
    for edit in edits:
        after = edit.after if edit.kind == "insert" else edit.cell_id
        try:
            proposed = create(
                notebook,
                turn_id=turn_id,
                kind=edit.kind,
                cell_id=after,
                new_source=edit.source,
                cell_type=edit.cell_type,
                summary=OFFLINE_SUMMARY,
                origin="offline",
            )
        except CellNotFound:
            continue  # its cell went meanwhile: nothing to propose against
        made.append(proposed.proposal)
    return made


def _replace_pending(
    notebook: YNotebook, turn_id: str, cell_id: str | None, kind: str
) -> list[str]:
    """Remove the turn's pending proposals for ``cell_id`` that a new one of ``kind``
    replaces: an edit or deletion replaces edits and deletions, outputs replace outputs.
    Returns their ids."""
    board = proposals_map(notebook)
    family = {kind} if kind in (OUTPUTS, VERSION) else {"modify", "delete"}
    gone = [
        p.id
        for p in of_turn(notebook, turn_id)
        if p.status == "pending" and p.kind in family and p.cell_id == cell_id
    ]
    for proposal_id in gone:
        del board[proposal_id]
    return gone


def is_stale(notebook: YNotebook, proposal: Proposal) -> bool:
    """Whether the cell changed since the proposal was made (or is gone).

    An insert is stale when the cell it goes after is gone (``cell_id`` null: never).
    """
    if proposal.cell_id is None:
        return False
    current = _source(notebook, proposal.cell_id)
    if current is None:
        return True
    if proposal.kind in ("insert", OUTPUTS):
        return False
    return current != proposal.base_source


def is_undone(notebook: YNotebook, proposal: Proposal) -> bool:
    """Whether the notebook no longer holds an accepted proposal's change.

    A tab's Ctrl-Z reverts the cell but not the proposal's status (its undo manager does
    not track this map), so this is read from the cells, as the panel does: only a return
    to exactly the state before the change counts (a cell edited further is the user's).
    Outputs put back are undone by the server, not Ctrl-Z (:func:`undo_outputs`), and
    their proposal says so itself (status ``undone``).
    """
    if proposal.status != "accepted" or proposal.kind == OUTPUTS:
        return False
    if proposal.kind == "insert":
        new_cell_id = proposal.new_cell_id
        return bool(new_cell_id) and _source(notebook, str(new_cell_id)) is None
    if proposal.cell_id is None:
        return False
    current = _source(notebook, proposal.cell_id)
    if proposal.kind == "delete":
        return current is not None
    before = proposal.base_source or ""
    return current == before and before != (proposal.new_source or "")


def _pending(notebook: YNotebook, proposal_id: str) -> Proposal:
    proposal = get(notebook, proposal_id)
    if proposal.status != "pending":
        raise Conflict(f"The proposal was already {proposal.status}.")
    return proposal


def _resolve(
    notebook: YNotebook, proposal: Proposal, status: str, by: str, **extra: Any
) -> Proposal:
    if proposal.kind == VERSION:
        extra["new_notebook"] = None  # resolved: the version store keeps it, not the document
    resolved = replace(proposal, status=status, resolved_by=by, resolved_at=now_iso(), **extra)
    proposals_map(notebook)[resolved.id] = resolved.to_y()
    return resolved


def acceptable(notebook: YNotebook, proposal_id: str) -> Proposal:
    """A proposal that can be accepted now: pending, and its cell unchanged.

    Raises:
        NotFound: No such proposal.
        Conflict: It is stale or already resolved.
    """
    proposal = _pending(notebook, proposal_id)
    if is_stale(notebook, proposal):
        raise Conflict(
            "The cell changed since this proposal was made; it cannot be applied as it is."
        )
    return proposal


def apply(notebook: YNotebook, proposal_id: str, by: str) -> Proposal:
    """Apply a pending, fresh proposal to the cells and mark it accepted (REST, no tab).

    A tab applies it itself instead (``src/agent/proposals.ts``), after a claim.

    Raises:
        Conflict: It is stale or already resolved.
    """
    proposal = acceptable(notebook, proposal_id)
    new_source = proposal.new_source or ""
    if proposal.kind == VERSION:
        notebook.set(json.loads(proposal.new_notebook or "{}"))
        return _resolve(notebook, proposal, "accepted", by)
    if proposal.kind == OUTPUTS:
        _, ycell = find_cell(notebook, str(proposal.cell_id))
        replaced = _put_outputs(ycell, json.loads(proposal.new_outputs or "[]"))
        return _resolve(notebook, proposal, "accepted", by, base_outputs=json.dumps(replaced))
    if proposal.kind == "modify":
        _, ycell = find_cell(notebook, str(proposal.cell_id))
        set_source(ycell, new_source)
        return _resolve(notebook, proposal, "accepted", by)
    if proposal.kind == "delete":
        index, _ = find_cell(notebook, str(proposal.cell_id))
        del notebook.ycells[index]
        return _resolve(notebook, proposal, "accepted", by)
    anchor = proposal.cell_id
    index = 0 if anchor is None else find_cell(notebook, anchor)[0] + 1
    cell_type = proposal.cell_type or "code"
    cell: dict[str, Any] = {"cell_type": cell_type, "source": new_source, "metadata": {}}
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    ycell = notebook.create_ycell(cell)
    notebook.ycells.insert(index, ycell)
    return _resolve(notebook, proposal, "accepted", by, new_cell_id=str(ycell["id"]))


def _put_outputs(ycell: Map, put_back: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace the cell's outputs with ``put_back``; return the outputs replaced."""
    added = [output_map(output) for output in put_back]
    outputs = ycell.get("outputs")
    if not isinstance(outputs, Array):
        ycell["outputs"] = Array(added)
        return []
    replaced: list[dict[str, Any]] = outputs.to_py() or []
    # Appended, then the old ones deleted: a tab reads that as "delete, then insert".
    # Replaced in place it reads "insert, then delete", and JupyterLab merges an inserted
    # stream into the same-name stream still before it (its text doubled or lost).
    outputs.extend(added)
    del outputs[0 : len(replaced)]
    return replaced


def undo_outputs(notebook: YNotebook, proposal_id: str, by: str) -> Proposal:
    """Put back the outputs an accepted ``outputs`` proposal replaced; mark it undone.

    Not Ctrl-Z in a tab: JupyterLab's cell model reads the undo of an output swap as
    "insert, then delete" and loses or doubles stream text, so a tab applies outputs
    outside its undo history and the undo is asked of the server (a forward change;
    ``docs/upstream/output-swap-stream-merge.md``).

    Raises:
        Conflict: Not an accepted outputs proposal.
        CellNotFound: Its cell is gone.
    """
    proposal = get(notebook, proposal_id)
    if proposal.kind != OUTPUTS or proposal.status != "accepted":
        raise Conflict(
            "Only accepted outputs can be undone here; undo an edit with Ctrl-Z in the notebook."
        )
    _, ycell = find_cell(notebook, str(proposal.cell_id))
    _put_outputs(ycell, json.loads(proposal.base_outputs or "[]"))
    return _resolve(notebook, proposal, "undone", by)


def reject(notebook: YNotebook, proposal_id: str, by: str) -> Proposal:
    """Mark a pending proposal rejected; the cells are left as they are."""
    return _resolve(notebook, _pending(notebook, proposal_id), "rejected", by)
