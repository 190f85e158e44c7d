"""What was approved is what runs: an approval is bound to the sources the user saw."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_helpers import AGENT, agent_state, approval_in
from jupyter_server.services.sessions.sessionmanager import SessionManager
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError

from jupyter_loop.document import set_source, source_hash
from jupyter_loop.testing import call_tools, say

APPROVED = "print('approved source')"
EDITED = "print('edited source')"


class SlowSessions(SessionManager):
    """Finds a notebook's kernel a second late: the moment between an approval and its run
    that an edit can fall into (a real session manager, set in the server's config)."""

    async def list_sessions(self) -> Any:
        await asyncio.sleep(1.0)
        return await super().list_sessions()


@pytest.fixture
def jp_server_config(jp_server_config):
    jp_server_config.ServerApp.session_manager_class = SlowSessions
    return jp_server_config


def printed(tab: Any, cell_id: str) -> str:
    return "".join(str(o.get("text", "")) for o in tab.cell(cell_id).get("outputs", []))


async def test_an_edit_right_after_approval_is_not_run_unapproved(
    write_notebook, start_kernel, open_tab, agent, loop_model_server, api
):
    path = write_notebook("approved.ipynb", APPROVED)
    await start_kernel(path)
    loop_model_server.script(call_tools(("run_cells", {"cell_ids": ["c0"]})), say("Done."))
    async with open_tab(path) as tab:
        await agent.start(path, "Run the cell.")
        first = await approval_in(tab)
        assert first["sources"] == {"c0": APPROVED}
        body = {"path": path, "decision": "once", "source_hashes": {"c0": source_hash(APPROVED)}}
        await api(*AGENT, "approvals", first["id"], method="POST", body=body)
        with tab.notebook.ydoc.transaction():
            set_source(tab.notebook.ycells[0], EDITED)  # the user edits right after allowing

        def asked_again_or_ended() -> Any:
            state = agent_state(tab)
            again = state.get("approval")
            return (again and again["id"] != first["id"] and again) or (
                state["turn"]["state"] == "done" and state
            )

        outcome = await wait_for(asked_again_or_ended)
        assert "edited source" not in printed(tab, "c0")
        assert outcome.get("sources") == {"c0": EDITED}  # asked again, for what would run
        assert outcome["source_hashes"] == {"c0": source_hash(EDITED)}
        await agent.approve(path, outcome["id"], "deny")
        conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "done"
    assert "edited source" not in printed(tab, "c0")


async def test_an_answer_for_other_sources_is_refused(
    write_notebook, start_kernel, open_tab, agent, loop_model_server, api
):
    path = write_notebook("other.ipynb", APPROVED)
    await start_kernel(path)
    loop_model_server.script(call_tools(("run_cells", {"cell_ids": ["c0"]})), say("Done."))
    async with open_tab(path) as tab:
        await agent.start(path, "Run the cell.")
        approval = await approval_in(tab)
        body = {"path": path, "decision": "once", "source_hashes": {"c0": source_hash(EDITED)}}
        with pytest.raises(HTTPClientError) as refused:
            await api(*AGENT, "approvals", approval["id"], method="POST", body=body)
        assert refused.value.code == 409
        await agent.approve(path, approval["id"], "deny")
        await agent.ended(path)


async def test_a_run_request_with_a_stale_hash_runs_nothing(
    write_notebook, start_kernel, open_tab, api
):
    path = write_notebook("stale.ipynb", EDITED)
    await start_kernel(path)
    async with open_tab(path) as tab:
        body = {"path": path, "cell_ids": ["c0"], "source_hashes": {"c0": source_hash(APPROVED)}}
        with pytest.raises(HTTPClientError) as refused:
            await api("api", "jupyter-loop", "runs", method="POST", body=body)
        assert refused.value.code == 409
        assert "changed since it was approved" in refused.value.response.body.decode()
        assert tab.marker("c0") is None and tab.cell("c0").get("execution_count") is None
