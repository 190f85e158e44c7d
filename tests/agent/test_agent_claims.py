"""Accepting is exactly once: one tab at a time gets a claim, applies the edit and marks it."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from agent_helpers import AGENT, Agent, proposal_in, tab_proposals
from loop_helpers import wait_for
from pycrdt import Map
from tornado.httpclient import HTTPClientError

from jupyter_loop.agent.claims import CLAIM_SECONDS, ClaimDesk
from jupyter_loop.agent.proposals import PROPOSALS_MAP
from jupyter_loop.document import set_source
from jupyter_loop.errors import Conflict
from jupyter_loop.testing import call_tools, say


async def claim(api: Any, path: str, proposal_id: str) -> tuple[int, dict[str, Any]]:
    try:
        reply = await api(
            *AGENT, "proposals", proposal_id, "claim", method="POST", body={"path": path}
        )
    except HTTPClientError as e:
        return e.code, json.loads(e.response.body)
    return 200, reply


def apply_as_the_panel_does(tab: Any, proposal: dict[str, Any], granted: dict[str, Any]) -> None:
    """The tab's edit and the accepted record, in one transaction of the tab's document."""
    with tab.notebook.ydoc.transaction():
        set_source(tab.notebook.ycells[0], proposal["new_source"])
        tab.notebook.ydoc.get(PROPOSALS_MAP, type=Map)[proposal["id"]] = {
            **proposal,
            "status": "accepted",
            "resolved_by": granted["by"],
            "resolved_at": datetime.now(timezone.utc).isoformat(),
            "claim": granted["claim"],
        }


async def test_two_tabs_accepting_at_once_get_one_claim_and_the_edit_once(
    write_notebook, open_tab, agent, loop_model_server, api
):
    path = write_notebook("claims.ipynb", "1 / 0")
    loop_model_server.script(
        call_tools(("propose_modify", {"cell_id": "c0", "source": "1 / 1", "summary": "fix"})),
        say("Done."),
    )
    async with open_tab(path) as tab, open_tab(path) as other:
        await agent.start(path, "Fix it.")
        proposal = await proposal_in(tab)
        replies = await asyncio.gather(*(claim(api, path, proposal["id"]) for _ in range(2)))
        statuses = sorted(status for status, _ in replies)
        assert statuses == [200, 409]
        granted = next(reply for status, reply in replies if status == 200)
        refused = next(reply for status, reply in replies if status == 409)
        assert "accepting this proposal in another tab" in refused["message"]
        assert 0 < granted["expires_in"] <= CLAIM_SECONDS

        with pytest.raises(HTTPClientError) as rest:  # nor can REST apply it meanwhile
            await agent.accept(path, proposal["id"])
        assert rest.value.code == 409

        apply_as_the_panel_does(tab, proposal, granted)
        await wait_for(lambda: tab_proposals(other)[proposal["id"]]["status"] == "accepted")
        assert other.cell("c0")["source"] == "1 / 1"
        accepts = await wait_for_accept(agent, path)
        assert [a["details"]["proposal_id"] for a in accepts] == [proposal["id"]]
        status, late = await claim(api, path, proposal["id"])
        assert status == 409 and "already accepted" in late["message"]
        await agent.ended(path)


async def wait_for_accept(agent: Agent, path: str) -> list[dict[str, Any]]:
    for _ in range(200):
        accepts = [e for e in await agent.journal(path) if e["action"] == "accept"]
        if accepts:
            return accepts
        await asyncio.sleep(0.05)
    raise AssertionError("no accept in the journal")


def test_a_lapsed_claim_is_granted_again():
    clock = [0.0]
    desk = ClaimDesk(now=lambda: clock[0])
    first = desk.grant("room", "p1", "ada")
    with pytest.raises(Conflict):
        desk.grant("room", "p1", "bob")
    clock[0] = CLAIM_SECONDS + 1  # ada's tab never applied it: the proposal is pending still
    second = desk.grant("room", "p1", "bob")
    assert second.by == "bob" and not desk.used("room", "p1", first.token)
    assert desk.used("room", "p1", second.token) and desk.holder("room", "p1") is None
