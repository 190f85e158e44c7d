"""The approvals waiting for a person on this server, as ``GET status`` lists them.

Each says where (the notebook), which cells, who asks (the label the request carries: "an
MCP client of ada, calling itself …", or the assistant's turn and who started it) and its
id, which ``jupyter loop approve NOTEBOOK ID`` and the REST answer take. Read from the
notebook's shared document, where every tab reads the request, so the terminal lists
exactly what the tabs show. Rejected: ``status`` listing turns only, where an MCP client's
request (no turn) was invisible and "Nothing running" was printed while it waited.
"""

from __future__ import annotations

from typing import Any

from ..document import LiveDocuments
from .approvals import ApprovalDesk
from .shared_turn import current_approval, current_turn


def asker_label(requested_by: str | None, started_by: str | None) -> str:
    """Who asks, as people are shown it.

    Example:
        >>> asker_label('an MCP client of ada, calling itself "x"', None)
        'an MCP client of ada, calling itself "x"'
        >>> asker_label(None, "ada"), asker_label(None, None)
        ("the assistant, in ada's turn", 'the assistant')
    """
    if requested_by:
        return requested_by
    return f"the assistant, in {started_by}'s turn" if started_by else "the assistant"


async def waiting_approvals(docs: LiveDocuments, desk: ApprovalDesk) -> list[dict[str, Any]]:
    """One entry per unanswered approval whose notebook still shows it."""
    listed = []
    for approval_id, room_id in desk.waiting():
        path = docs.path_of(room_id)
        if path is None:  # its notebook is gone: nothing to answer
            continue
        notebook = await docs.notebook(room_id)
        shown = current_approval(notebook)
        if shown is None or shown.id != approval_id:
            continue
        turn = current_turn(notebook) if not shown.requested_by else None
        listed.append(
            {
                "id": shown.id,
                "path": path,
                "cell_ids": list(shown.cell_ids),
                "asked_by": asker_label(shown.requested_by, turn.started_by if turn else None),
                # An ACP agent's permission request names no cell: what it asks, in its
                # words (masked when asked), as the tabs' card shows it.
                "asks": [] if shown.cell_ids else list(shown.sources.values()),
                "requested_at": shown.requested_at,
            }
        )
    return listed
