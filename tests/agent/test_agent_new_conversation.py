"""A new conversation: what the model is sent from then on, what every tab shows, the refusals."""

from __future__ import annotations

import json

import pytest
from agent_helpers import AGENT, OPENAI_CHAT, agent_state, prompt_text
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError

from jupyter_loop.testing import Reply, say

FAILED_QUESTION = "Why does the second cell divide by zero?"
PARTIAL_ANSWER = "Because x is zero and"


@pytest.fixture
def notebook(write_notebook):
    return write_notebook("chat.ipynb", "x = 0", "1 / x")


async def new_conversation(api, path):
    return await api(*AGENT, "conversations", method="POST", body={"path": path})


async def refused(call, code):
    with pytest.raises(HTTPClientError) as caught:
        await call
    assert caught.value.code == code
    return json.loads(caught.value.response.body)["message"]


async def test_a_failed_turn_is_sent_again_until_a_new_conversation(
    api, agent, notebook, loop_model_server, open_tab
):
    loop_model_server.script(
        Reply(text=PARTIAL_ANSWER + " so the division fails.", cut_after=3, chunk_size=8),
        say("Still about the division."),
        say("Fresh start."),
    )
    await agent.start(notebook, FAILED_QUESTION)
    failed = await agent.ended(notebook)
    assert failed["turn"]["state"] == "error"

    # Without a new conversation, the failed turn goes to the model again.
    await agent.start(notebook, "Try again please.")
    await agent.ended(notebook)
    second = prompt_text(loop_model_server.bodies(OPENAI_CHAT)[1])
    assert FAILED_QUESTION in second

    async with open_tab(notebook) as tab:
        assert agent_state(tab)["turn"]["state"] == "done"
        started = await new_conversation(api, notebook)
        assert started["conversation"]["id"]
        # Every tab sees the conversation emptied, and which conversation is now current.
        await wait_for(lambda: "turn" not in agent_state(tab))
        state = agent_state(tab)
        assert state["live"] == []
        assert state["conversation"]["id"] == started["conversation"]["id"]

    fresh = await agent.conversation(notebook)
    assert fresh["messages"] == [] and fresh["turn"] is None and fresh["turns"] == []

    await agent.start(notebook, "What does the first cell do?")
    conversation = await agent.ended(notebook)
    third = prompt_text(loop_model_server.bodies(OPENAI_CHAT)[2])
    for old in (FAILED_QUESTION, "Try again please.", "Still about the division."):
        assert old not in third, old
    assert "What does the first cell do?" in third
    assert [(m["role"], m["text"]) for m in conversation["messages"]] == [
        ("user", "What does the first cell do?"),
        ("assistant", "Fresh start."),
    ]
    assert [t["state"] for t in conversation["turns"]] == ["done"]

    # The old conversation stays readable in the journal, with who started the new one.
    entries = await agent.journal(notebook)
    said = [e["details"]["text"] for e in entries if e["action"] == "user_message"]
    assert said[:2] == [FAILED_QUESTION, "Try again please."]
    started_entry = next(e for e in entries if e["action"] == "new_conversation")
    assert started_entry["by"] and started_entry["details"]["messages_before"] >= 4


async def test_a_new_conversation_while_a_turn_runs_is_409(api, agent, notebook, loop_model_server):
    loop_model_server.script(say("slow " * 20, delay=0.02))
    await agent.start(notebook, "first")
    message = await refused(new_conversation(api, notebook), 409)
    assert "stop the turn" in message
    conversation = await agent.ended(notebook)
    assert conversation["turn"]["state"] == "done"
    assert [m["text"] for m in conversation["messages"] if m["role"] == "user"] == ["first"]
    actions = [e["action"] for e in await agent.journal(notebook)]
    assert "new_conversation" not in actions


async def test_new_conversation_bad_requests(api, notebook):
    assert "'path'" in await refused(api(*AGENT, "conversations", method="POST", body={}), 400)
    await refused(new_conversation(api, "missing.ipynb"), 404)
