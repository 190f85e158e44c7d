"""The agent's REST edge: bad input gets a 4xx with a message; models; durability by file id."""

from __future__ import annotations

import json

import pytest
from agent_helpers import AGENT, agent_state, notices, refused
from loop_fixtures import TEST_API_KEY

from jupyter_loop.testing import say


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("not json", "not valid JSON"),
        ([], "JSON object"),
        ({"message": "hi"}, "'path'"),
        ({"path": "nb.ipynb"}, "'message'"),
        ({"path": "nb.ipynb", "message": "  "}, "'message'"),
        ({"path": "nb.ipynb", "message": "hi", "approval": "sometimes"}, "'approval'"),
        ({"path": "nb.ipynb", "message": "hi", "focus_cell_ids": "c0"}, "'focus_cell_ids'"),
        ({"path": "nb.ipynb", "message": "hi", "provider": "claude"}, "'provider'"),
        ({"path": "nb.ipynb", "message": "hi", "max_steps": 0}, "'max_steps'"),
        ({"path": "../x.ipynb", "message": "hi"}, "not a path"),
    ],
)
async def test_bad_turn_requests_are_400(api, write_notebook, body, words):
    write_notebook("nb.ipynb", "1")
    raw = body if isinstance(body, str) else json.dumps(body)
    message = await refused(api(*AGENT, "turns", method="POST", body=raw), 400)
    assert words in message


async def test_unknown_things_are_404(api, agent, write_notebook):
    path = write_notebook("nb.ipynb", "1")
    await refused(agent.start("missing.ipynb", "hi"), 404)
    await refused(agent.conversation("missing.ipynb"), 404)
    assert "'path'" in await refused(api(*AGENT, "conversation"), 400)
    assert "'path'" in await refused(api(*AGENT, "journal"), 400)
    await refused(agent.accept(path, "p-nope"), 404)
    await refused(agent.reject(path, "p-nope"), 404)
    await refused(agent.approve(path, "a-nope"), 404)
    await refused(agent.stop(path, "t-nope"), 404)
    body = {"path": path, "decision": "maybe"}
    message = await refused(api(*AGENT, "approvals", "a1", method="POST", body=body), 400)
    assert "'decision'" in message
    message = await refused(api(*AGENT, "proposals", "p1", "claim", method="POST", body={}), 400)
    assert "'path'" in message
    body = {"path": path}
    await refused(api(*AGENT, "proposals", "p-nope", "claim", method="POST", body=body), 404)


async def test_models_lists_the_scripted_models_without_the_key(api):
    models = await api(*AGENT, "models")
    assert models == {
        "provider": "openai",
        "configured": True,
        "default_model": "scripted-tools",
        "models": ["scripted-plain", "scripted-tools", "scripted-vision"],
        "hint": None,
    }
    assert TEST_API_KEY not in json.dumps(models)
    other = await api(*AGENT, "models", params={"provider": "ollama"})
    assert other["configured"] is False and "OLLAMA_HOST" in other["hint"]


async def test_the_assistant_is_built_by_the_first_request_not_by_the_servers_start(
    api, jp_serverapp
):
    assistant = jp_serverapp.web_app.settings["jupyter_loop_assistant"]
    assert assistant.built is None  # a started server has not paid for it
    models = await api(*AGENT, "models")
    assert models["configured"] is True and "scripted-tools" in models["models"]
    assert assistant.built is not None


async def test_a_renamed_notebook_keeps_its_conversation(
    api, agent, write_notebook, loop_model_server
):
    path = write_notebook("before.ipynb", "1")
    loop_model_server.script(say("Hello there."))
    await agent.start(path, "hi")
    before = await agent.ended(path)
    await api("api", "contents", path, method="PATCH", body={"path": "after.ipynb"})
    after = await agent.conversation("after.ipynb")
    assert after["file_id"] == before["file_id"]
    assert [m["text"] for m in after["messages"]] == ["hi", "Hello there."]
    assert [e["action"] for e in await agent.journal("after.ipynb")][0] == "user_message"


async def test_a_turn_cut_off_by_a_restart_is_closed_when_read(
    agent, write_notebook, jp_serverapp, open_tab
):
    path = write_notebook("cut.ipynb", "1")
    conversation = await agent.conversation(path)
    service = jp_serverapp.web_app.settings["jupyter_loop_assistant"].agent
    file_id = conversation["file_id"]
    # What a server killed mid-turn leaves behind: a running turn in the store.
    service.store.save_turn(file_id, {"id": "t-old", "state": "running", "usage": {}})
    conversation = await agent.conversation(path)
    assert conversation["turn"]["state"] == "error"
    assert "server restart" in conversation["turn"]["error"]
    assert notices(conversation) == ["The turn was cut off by a server restart."]
    again = await agent.conversation(path)
    assert again["turn"]["state"] == "error" and len(notices(again)) == 1
    async with open_tab(path) as tab:
        assert agent_state(tab).get("turn") is None  # never shown: nothing to correct


class TestUnconfigured:
    @pytest.fixture
    def loop_config(self, monkeypatch):
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST"):
            monkeypatch.delenv(name, raising=False)
        return {}

    async def test_models_says_how_to_configure_a_provider(self, api):
        models = await api(*AGENT, "models")
        assert models["configured"] is False and models["models"] == []
        for name in ("OPENAI_API_KEY", "c.JupyterLoopApp.openai_api_key", "OLLAMA_HOST"):
            assert name in models["hint"]
        # where the settings go, and that a local server needs no key: the first hour's
        # two questions
        assert "jupyter_server_config.py" in models["hint"]
        assert "jupyter --config-dir" in models["hint"]
        assert "needs no key" in models["hint"]

    async def test_a_turn_says_how_to_configure_a_provider(self, agent, write_notebook):
        path = write_notebook("nb.ipynb", "1")
        message = await refused(agent.start(path, "hi"), 503)
        assert "OPENAI_API_KEY" in message
