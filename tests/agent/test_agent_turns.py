"""The agent end to end: real server, real kernel, real Y clients, the scripted model server."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_helpers import (
    OPENAI_CHAT,
    agent_state,
    approval_in,
    notices,
    prompt_text,
    proposal_in,
    tab_proposals,
)
from loop_fixtures import TEST_API_KEY
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError

from jupyter_loop.document import set_source
from jupyter_loop.testing import call_tools, say

FIX = "print('fixed', 1 / 1)"


def chat_bodies(loop_model_server):
    return loop_model_server.bodies(OPENAI_CHAT)


async def failing_notebook(write_notebook, start_kernel, run_cells, open_tab, name):
    path = write_notebook(name, "x = 0", "1 / x")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 2)
    return path


def script_fix(loop_model_server):
    loop_model_server.script(
        call_tools(
            ("propose_modify", {"cell_id": "c1", "source": FIX, "summary": "divide by one"}),
            text="The cell divides by zero. ",
        ),
        call_tools(("run_cells", {"cell_ids": ["c1"]})),
        say("Fixed: it now prints `fixed 1.0`."),
    )


async def approval_for_fix(tab, agent, path):
    """The approval to run the fixed cell.

    The model may ask to run the cell before the proposal is accepted: that approval shows
    the old source, and approving it makes the agent ask again for what would now run.
    """
    approval = await approval_in(tab)
    if approval["sources"]["c1"] != FIX:
        await agent.approve(path, approval["id"])
        first = approval["id"]
        approval = await wait_for(
            lambda: (a := agent_state(tab).get("approval")) and a["id"] != first and a
        )
    return approval


async def test_fix_a_failing_cell_with_a_tab_open(
    write_notebook, start_kernel, run_cells, open_tab, agent, loop_model_server
):
    path = await failing_notebook(write_notebook, start_kernel, run_cells, open_tab, "fail.ipynb")
    script_fix(loop_model_server)
    async with open_tab(path) as tab:
        turn_id = await agent.start(path, "Why does the second cell fail? Fix it.")
        first = await wait_for(lambda: chat_bodies(loop_model_server))
        assert "ZeroDivisionError" in prompt_text(first[0])
        assert "c1" in prompt_text(first[0])
        assert first[0]["tools"] and first[0]["model"] == "scripted-tools"

        proposal = await proposal_in(tab)
        assert proposal["kind"] == "modify" and proposal["cell_id"] == "c1"
        assert proposal["base_source"] == "1 / x" and proposal["new_source"] == FIX
        assert tab.cell("c1")["source"] == "1 / x"  # nothing changes before accept
        reply = await agent.accept(path, proposal["id"])
        assert reply["status"] == "accepted"
        await wait_for(lambda: tab.cell("c1")["source"] == FIX)

        approval = await approval_for_fix(tab, agent, path)
        assert approval["cell_ids"] == ["c1"] and approval["sources"]["c1"] == FIX
        assert agent_state(tab)["turn"]["state"] == "waiting_approval"
        assert await agent.approve(path, approval["id"]) == {"decision": "once"}

        conversation = await agent.ended(path)
        assert conversation["turn"]["id"] == turn_id
        assert conversation["turn"]["state"] == "done"
        bodies = chat_bodies(loop_model_server)
        assert len(bodies) == 3
        assert "fixed 1.0" in prompt_text(bodies[2])
        assert "fixed 1.0" not in prompt_text(bodies[1])
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 3)
        assert tab.marker("c1")["status"] == "ok"

        state = agent_state(tab)
        assert state["turn"]["state"] == "done" and "approval" not in state
        kinds = [entry["kind"] for entry in state["live"]]
        assert kinds == ["user", "assistant", "tool", "tool", "assistant"]
        assert state["live"][-1]["text"] == "Fixed: it now prints `fixed 1.0`."
        assert state["live"][3]["summary"] == "ran cell 2 → ok"
        assert tab_proposals(tab)[proposal["id"]]["status"] == "accepted"

    roles = [m["role"] for m in conversation["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "assistant"]
    assert conversation["messages"][0]["by"]
    actions = [entry["action"] for entry in await agent.journal(path)]
    for action in ("user_message", "model_call", "tool_call", "proposal", "accept"):
        assert action in actions
    for action in ("approval_requested", "approval", "cell_run", "turn_end"):
        assert action in actions
    accept = next(e for e in await agent.journal(path) if e["action"] == "accept")
    assert accept["by"] and not accept["by"].startswith("agent for")
    assert accept["details"]["proposal_id"] == proposal["id"]


class TestNoTab:
    @pytest.fixture
    def rtc_cleanup_delay(self):
        return 0.2  # an unpinned room would be gone long before the turn ends

    async def test_fix_a_failing_cell_with_no_tab_open_mid_turn(
        self, write_notebook, start_kernel, run_cells, open_tab, agent, loop_model_server
    ):
        path = await failing_notebook(
            write_notebook, start_kernel, run_cells, open_tab, "away.ipynb"
        )
        script_fix(loop_model_server)
        async with open_tab(path) as tab:
            await agent.start(path, "Fix the failing cell.")
            proposal = await proposal_in(tab)
        # Every tab is closed: the turn goes on, the proposal is accepted over REST.
        await asyncio.sleep(0.5)
        await agent.accept(path, proposal["id"])
        async with open_tab(path) as tab:
            approval = await approval_for_fix(tab, agent, path)
        await asyncio.sleep(0.5)
        await agent.approve(path, approval["id"], "turn")
        conversation = await agent.ended(path)
        assert conversation["turn"]["state"] == "done"
        assert "fixed 1.0" in prompt_text(chat_bodies(loop_model_server)[2])
        async with open_tab(path) as tab:
            state = agent_state(tab)
            assert state["turn"]["state"] == "done"
            assert state["live"][-1]["text"] == "Fixed: it now prints `fixed 1.0`."
            assert tab.cell("c1")["source"] == FIX
            await wait_for(lambda: "fixed 1.0" in tab.text("c1"))


async def test_a_second_turn_sees_the_conversation_so_far(write_notebook, agent, loop_model_server):
    path = write_notebook("chat.ipynb", "1 + 1")
    loop_model_server.script(say("It adds one and one."), say("Two."))
    await agent.start(path, "What does the cell do?")
    await agent.ended(path)
    await agent.start(path, "And the result?")
    conversation = await agent.ended(path)
    second = prompt_text(chat_bodies(loop_model_server)[1])
    assert "What does the cell do?" in second and "It adds one and one." in second
    texts = [(m["role"], m["text"]) for m in conversation["messages"]]
    assert texts == [
        ("user", "What does the cell do?"),
        ("assistant", "It adds one and one."),
        ("user", "And the result?"),
        ("assistant", "Two."),
    ]
    assert [t["state"] for t in conversation["turns"]] == ["done", "done"]


async def test_reject_leaves_the_cell_untouched(write_notebook, open_tab, agent, loop_model_server):
    path = write_notebook("reject.ipynb", "a = 1", "b = 2")
    loop_model_server.script(
        call_tools(("propose_delete", {"cell_id": "c0", "summary": "unused"})),
        call_tools(
            ("propose_insert", {"after_cell_id": "c1", "source": "a + b", "summary": "sum"})
        ),
        say("Proposed."),
    )
    async with open_tab(path) as tab:
        await agent.start(path, "Tidy up.")
        await agent.ended(path)
        found = sorted(tab_proposals(tab).values(), key=lambda p: p["created_at"])
        delete, insert = found
        assert (await agent.reject(path, delete["id"]))["status"] == "rejected"
        await agent.accept(path, insert["id"])
        await wait_for(lambda: tab.notebook.cell_number == 3)
        assert [tab.cell(i)["source"] for i in ("c0", "c1")] == ["a = 1", "b = 2"]
        new_id = tab_proposals(tab)[insert["id"]]["new_cell_id"]
        assert tab.notebook.ycells[2]["id"] == new_id
        assert str(tab.notebook.ycells[2]["source"]) == "a + b"
        assert tab_proposals(tab)[delete["id"]]["status"] == "rejected"
    memory = prompt_text(chat_bodies(loop_model_server)[2])
    assert "proposal" in memory and "pending" in memory


async def test_a_stale_proposal_cannot_be_accepted(
    write_notebook, open_tab, agent, loop_model_server
):
    path = write_notebook("stale.ipynb", "1 / 0")
    loop_model_server.script(
        call_tools(("propose_modify", {"cell_id": "c0", "source": "1 / 1", "summary": "fix"})),
        say("Done."),
    )
    async with open_tab(path) as tab, open_tab(path) as other:
        await agent.start(path, "Fix it.")
        proposal = await proposal_in(tab)
        set_source(tab.notebook.ycells[0], "2 / 0")  # the user edits the cell meanwhile
        await wait_for(lambda: other.cell("c0")["source"] == "2 / 0")  # the server has it
        with pytest.raises(HTTPClientError) as refused:
            await agent.accept(path, proposal["id"])
        assert refused.value.code == 409
        assert "changed" in json.loads(refused.value.response.body)["message"]
        assert tab.cell("c0")["source"] == "2 / 0"
        assert tab_proposals(tab)[proposal["id"]]["status"] == "pending"
        await agent.ended(path)


async def test_the_key_never_reaches_a_reply(agent, write_notebook, loop_model_server):
    path = write_notebook("keys.ipynb", "1")
    models = await agent.api("api", "jupyter-loop", "agent", "models")
    assert models["configured"] is True and models["provider"] == "openai"
    assert "scripted-tools" in models["models"] and models["default_model"] == "scripted-tools"
    await agent.start(path, "hi")
    conversation = await agent.ended(path)
    everything = json.dumps([models, conversation, await agent.journal(path)])
    assert TEST_API_KEY not in everything
    assert notices(conversation) == []


async def test_the_map_marks_stale_outputs_and_the_turns_runs_are_its_own(
    write_notebook, start_kernel, run_cells, open_tab, agent, loop_model_server, api
):
    path = write_notebook("stale.ipynb", "x = 1\nx", "x + 1")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 2)
        set_source(next(c for c in tab.notebook.ycells if c["id"] == "c0"), "x = 2\nx")
        await asyncio.sleep(0.5)  # the edit reaches the server's document
        loop_model_server.script(call_tools(("run_cells", {"cell_ids": ["c1"]})), say("Ran it."))
        turn_id = await agent.start(path, "Run the second cell.")
        approval = await approval_in(tab)
        await agent.approve(path, approval["id"])
        await agent.ended(path)
    messages = json.loads(prompt_text(chat_bodies(loop_model_server)[0]))
    first = "\n".join(str(m.get("content")) for m in messages)
    lines = {
        line.split()[1]: line for line in first.splitlines() if line.startswith(("1 c0", "2 c1"))
    }
    assert set(lines) == {"c0", "c1"}, first
    assert "(stale: edited since this output)" in lines["c0"]
    assert "stale" not in lines["c1"]
    reply = await api("api", "jupyter-loop", "history", params={"path": path, "cell_id": "c1"})
    newest = reply["runs"][0]
    assert newest["channel"] == "assistant" and newest["turn"] == turn_id
    assert newest["by"].startswith(f"the assistant's turn {turn_id} asked by ")
