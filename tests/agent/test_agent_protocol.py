"""The agent speaks the models' own tool protocol and does not loop or pile up proposals.

End to end against the strict scripted model server (it answers 400 to a protocol mistake).
"""

from __future__ import annotations

import pytest
from agent_helpers import (
    OLLAMA_CHAT,
    OPENAI_CHAT,
    notices,
    prompt_text,
    tab_proposals,
)
from test_agent_prompts import write_with_outputs, zero_division

from jupyter_loop.testing import ScriptedCall, call_tools, say

FIX = {"cell_id": "c1", "source": "print(1)", "summary": "print one"}


@pytest.fixture
def agent_settings():
    return {"agent_max_steps": 6}


@pytest.fixture
def notebook(write_notebook):
    return write_notebook("nb.ipynb", "x = 0", "1 / x")


def proposals_of(conversation):
    return [m for m in conversation["messages"] if m["role"] == "tool"]


async def test_a_model_following_the_openai_protocol_ends_the_turn(
    agent, notebook, loop_model_server
):
    # The model proposes, and answers once it sees its call's result as a tool message.
    loop_model_server.set_default_reply(
        call_tools(("propose_modify", FIX), answer_after_tool="Done.")
    )
    await agent.start(notebook, "Fix the second cell.")
    conversation = await agent.ended(notebook)
    assert (conversation["turn"]["state"], conversation["messages"][-1]["text"]) == (
        "done",
        "Done.",
    )
    bodies = loop_model_server.bodies(OPENAI_CHAT)
    assert len(bodies) == 2
    messages = bodies[1]["messages"]
    asked = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
    answered = [m for m in messages if m["role"] == "tool"]
    assert [call["function"]["name"] for call in asked[0]["tool_calls"]] == ["propose_modify"]
    assert [m["tool_call_id"] for m in answered] == [asked[0]["tool_calls"][0]["id"]]
    assert "shown to the user" in answered[0]["content"]
    assert len(proposals_of(conversation)) == 1


async def test_requests_within_a_turn_extend_each_other(agent, notebook, loop_model_server):
    loop_model_server.script(
        call_tools(("read_cell", {"cell_id": "c0"})),
        call_tools(("read_cell", {"cell_id": "c1"})),
        say("It divides by zero."),
    )
    await agent.start(notebook, "Why does it fail?")
    assert (await agent.ended(notebook))["turn"]["state"] == "done"
    first, second, third = (b["messages"] for b in loop_model_server.bodies(OPENAI_CHAT))
    # Everything but the live view (the last message) is sent again, unchanged, first.
    assert second[: len(first) - 1] == first[:-1]
    assert third[: len(second) - 1] == second[:-1]
    assert [m["role"] for m in third[-6:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
    ]


async def test_a_repeated_call_is_refused_then_ends_the_turn(agent, notebook, loop_model_server):
    loop_model_server.set_default_reply(call_tools(("read_cell", {"cell_id": "c1"})))
    await agent.start(notebook, "Why?")
    conversation = await agent.ended(notebook)
    bodies = loop_model_server.bodies(OPENAI_CHAT)
    assert len(bodies) == 3  # ran once, refused once, and the third time ends the turn
    assert "same call with the same arguments" in bodies[2]["messages"][-2]["content"]
    assert conversation["turn"]["state"] == "error"
    assert "repeated the same call (read_cell) three times" in conversation["turn"]["error"]


async def test_a_new_proposal_for_a_cell_replaces_the_pending_one(
    agent, notebook, loop_model_server, open_tab
):
    second = {**FIX, "source": "print(2)", "summary": "print two"}
    loop_model_server.script(
        call_tools(("propose_modify", FIX)), call_tools(("propose_modify", second)), say("ok")
    )
    await agent.start(notebook, "Fix it.")
    assert (await agent.ended(notebook))["turn"]["state"] == "done"
    async with open_tab(notebook) as tab:
        left = list(tab_proposals(tab).values())
    assert [(p["new_source"], p["status"]) for p in left] == [("print(2)", "pending")]


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (ScriptedCall("propose_modify", {"cell_id": "c1", "source": "1"}), "'summary' is requir"),
        (
            ScriptedCall("read_cell", '{"cell_id": "c1", "offset": 1e400}'),
            "'offset' must be a finite",
        ),
        (ScriptedCall("notebook_map", {"start": "two"}), "'start' must be an integer"),
        (ScriptedCall("run_cells", {"cell_ids": [1]}), "'cell_ids[0]' must be a string"),
    ],
    ids=["missing-summary", "overflowing-number", "wrong-type", "wrong-item-type"],
)
async def test_arguments_against_the_schema_are_failed_calls_the_model_sees(
    agent, notebook, loop_model_server, call, words
):
    loop_model_server.script(call_tools(call), say("Sorry."))
    await agent.start(notebook, "Why?")
    conversation = await agent.ended(notebook)
    assert conversation["turn"]["state"] == "done", conversation["turn"]
    tool_message = loop_model_server.bodies(OPENAI_CHAT)[1]["messages"][-2]
    assert (tool_message["role"], words in tool_message["content"]) == ("tool", True), tool_message
    assert any(words in text for text in notices(conversation)), notices(conversation)


async def test_cells_are_numbered_as_the_user_sees_them(agent, notebook, loop_model_server):
    loop_model_server.script(call_tools(("read_cell", {"cell_id": "c1"})), say("ok"))
    await agent.start(notebook, "Why?")
    conversation = await agent.ended(notebook)
    tool_line = proposals_of(conversation)[0]["text"]
    first = loop_model_server.bodies(OPENAI_CHAT)[0]["messages"]
    assert tool_line == "read cell 2"
    assert "\n2 c1 code [ ] 1 / x" in prompt_text({"messages": first}).replace("\\n", "\n")


class TestOllama:
    @pytest.fixture
    def loop_config(self, loop_model_server):
        return {
            "agent_provider": "ollama",
            "ollama_host": loop_model_server.ollama_host,
            "agent_model": "scripted-tools",
            "agent_request_timeout": 5.0,
            "batch_interval": 0.01,
            "agent_max_steps": 6,
        }

    async def test_native_tool_messages(self, agent, jp_root_dir, loop_model_server):
        path = write_with_outputs(jp_root_dir, "o.ipynb", [("1 / 0", [zero_division()])])
        loop_model_server.set_default_reply(
            call_tools(("read_cell", {"cell_id": "c0"}), answer_after_tool="Division by zero.")
        )
        await agent.start(path, "Why?")
        conversation = await agent.ended(path)
        assert conversation["turn"]["state"] == "done", notices(conversation)
        second = loop_model_server.bodies(OLLAMA_CHAT)[1]["messages"]
        asked = next(m for m in second if m.get("tool_calls"))
        tool = next(m for m in second if m["role"] == "tool")
        assert asked["tool_calls"] == [
            {"function": {"name": "read_cell", "arguments": {"cell_id": "c0"}}}
        ]
        assert (tool["tool_name"], "ZeroDivisionError" in tool["content"]) == ("read_cell", True)
