"""Every failure ends the step with a clear notice and leaves the notebook intact."""

from __future__ import annotations

import asyncio
import json
import logging
import socket

import pytest
from agent_helpers import OPENAI_CHAT, agent_state, notices, openai_config, prompt_text
from loop_helpers import notebook_json, replace_on_disk, wait_for
from tornado.httpclient import HTTPClientError

from jupyter_loop.agent.shared_turn import LiveTurn, StreamedText
from jupyter_loop.agent.store import now_iso
from jupyter_loop.document import LiveDocuments, collaboration
from jupyter_loop.document.reference import NotebookRef
from jupyter_loop.records import TurnRecord, UserEntry
from jupyter_loop.testing import Reply, ScriptedCall, call_tools, fail, no_tools, rate_limited, say

SOURCES = ("x = 0", "1 / x")
RELOADED_CELLS = 3000  # a checkout the room sets over many turns of the loop


@pytest.fixture
def agent_settings():
    return {"agent_max_steps": 4}


@pytest.fixture
def notebook(write_notebook):
    return write_notebook("nb.ipynb", *SOURCES)


async def failed_turn(agent, path, message="Why?"):
    await agent.start(path, message)
    conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "error"
    return conversation


async def assert_intact(open_tab, path):
    async with open_tab(path) as tab:
        assert [tab.cell(f"c{i}")["source"] for i in range(2)] == list(SOURCES)
        state = agent_state(tab)
        assert state["turn"]["state"] in ("error", "stopped")
        assert "approval" not in state
        return state


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (fail(401, "Incorrect API key provided"), "rejected the API key (401)"),
        (fail(500, "boom"), "internal error (500)"),
        (no_tools("scripted-tools"), "does not support tools"),
        (Reply(text="The answer is cut off here, mid sent", cut_after=4), "Try again."),
    ],
    ids=["401", "500", "no-tools", "stream-cut"],
)
async def test_provider_errors_end_the_turn_with_a_notice(
    agent, notebook, loop_model_server, open_tab, reply, words
):
    loop_model_server.script(reply)
    conversation = await failed_turn(agent, notebook)
    assert any(words in text for text in notices(conversation)), notices(conversation)
    assert words in conversation["turn"]["error"]
    state = await assert_intact(open_tab, notebook)
    assert state["live"][-1]["kind"] == "notice" and state["live"][-1]["level"] == "error"
    entries = await agent.journal(notebook)
    assert [e["action"] for e in entries][-2:] == ["model_error", "turn_end"]


async def test_a_stream_cut_keeps_the_text_that_arrived(agent, notebook, loop_model_server):
    loop_model_server.script(Reply(text="Partial answer that goes on", cut_after=3, chunk_size=4))
    conversation = await failed_turn(agent, notebook)
    said = [m["text"] for m in conversation["messages"] if m["role"] == "assistant"]
    assert said and "Partial answer that goes on".startswith(said[0])


async def test_rate_limits_are_retried_as_the_server_asks(agent, notebook, loop_model_server):
    loop_model_server.script(rate_limited(0.05), say("Now it works."))
    await agent.start(notebook, "hello")
    conversation = await agent.ended(notebook)
    assert conversation["turn"]["state"] == "done"
    assert len(loop_model_server.bodies(OPENAI_CHAT)) == 2
    assert conversation["messages"][-1]["text"] == "Now it works."


async def test_rate_limits_give_up_after_a_bounded_number_of_retries(
    agent, notebook, loop_model_server, open_tab
):
    loop_model_server.script(*(rate_limited(0.01) for _ in range(3)), say("never sent"))
    conversation = await failed_turn(agent, notebook)
    assert "limiting the rate of requests (429)" in conversation["turn"]["error"]
    assert "2 retries" in conversation["turn"]["error"]
    assert len(loop_model_server.bodies(OPENAI_CHAT)) == 3
    await assert_intact(open_tab, notebook)


async def test_a_model_that_never_stops_calling_tools_is_capped(
    agent, notebook, loop_model_server, open_tab
):
    # Different calls each step (the same call again would be refused as a repeat).
    loop_model_server.script(*(call_tools(("notebook_map", {"start": n})) for n in range(1, 5)))
    conversation = await failed_turn(agent, notebook)
    assert len(loop_model_server.bodies(OPENAI_CHAT)) == 4
    assert "after 4 steps" in conversation["turn"]["error"]
    assert "agent_max_steps" in conversation["turn"]["error"]
    assert conversation["turn"]["steps"] == 4
    await assert_intact(open_tab, notebook)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (ScriptedCall("read_cell", '{"cell_id": "c1"'), "not a JSON object"),
        (ScriptedCall("frobnicate", {"x": 1}), "no tool named 'frobnicate'"),
        (ScriptedCall("read_cell", {"cell_id": "nope"}), "No cell with id 'nope'"),
        (ScriptedCall("run_cells", {"cell_ids": ["c0", "ghost"]}), "No cell with id 'ghost'"),
        (ScriptedCall("propose_modify", {"cell_id": "c1"}), "'source' is required"),
    ],
    ids=["bad-json", "unknown-tool", "unknown-cell", "run-unknown-cell", "missing-argument"],
)
async def test_bad_tool_calls_go_back_to_the_model_and_show_as_notices(
    agent, notebook, loop_model_server, open_tab, call, words
):
    loop_model_server.script(call_tools(call), say("Sorry, let me answer directly."))
    await agent.start(notebook, "Why?")
    conversation = await agent.ended(notebook)
    assert conversation["turn"]["state"] == "done"
    assert any(words in text for text in notices(conversation)), notices(conversation)
    second = prompt_text(loop_model_server.bodies(OPENAI_CHAT)[1])
    assert words.replace("'", "\\'") in second or words in second
    assert "[failed]" in second
    tool = next(m for m in conversation["messages"] if m["role"] == "tool")
    assert tool["tool"]["ok"] is False
    async with open_tab(notebook) as tab:
        assert [tab.cell(f"c{i}")["source"] for i in range(2)] == list(SOURCES)
        assert tab.marker("c0") is None  # nothing ran


async def test_two_turns_at_once_is_409(agent, notebook, loop_model_server):
    loop_model_server.script(say("slow " * 20, delay=0.02))
    await agent.start(notebook, "first")
    with pytest.raises(HTTPClientError) as refused:
        await agent.start(notebook, "second")
    assert refused.value.code == 409
    assert "already working" in json.loads(refused.value.response.body)["message"]
    conversation = await agent.ended(notebook)
    assert conversation["turn"]["state"] == "done"
    assert [m["text"] for m in conversation["messages"] if m["role"] == "user"] == ["first"]


async def test_stop_mid_stream(agent, notebook, loop_model_server, open_tab):
    loop_model_server.script(say("word " * 400, delay=0.01))
    async with open_tab(notebook) as tab:
        turn_id = await agent.start(notebook, "Tell me a long story.")
        await wait_for(lambda: len(_assistant_text(tab)) > 20)
        assert await agent.stop(notebook, turn_id) == {"stopped": True}
        await wait_for(lambda: agent_state(tab)["turn"]["state"] == "stopped")
        state = agent_state(tab)
        assert state["live"][-1]["kind"] == "notice"
        assert "Stopped by" in state["live"][-1]["text"]
        shown = _assistant_text(tab)
        assert 20 < len(shown) < len("word " * 400)
    conversation = await agent.conversation(notebook)
    assert conversation["turn"]["state"] == "stopped"
    said = [m["text"] for m in conversation["messages"] if m["role"] == "assistant"]
    assert said == [shown]
    with pytest.raises(HTTPClientError) as again:
        await agent.stop(notebook, turn_id)
    assert again.value.code == 409


async def test_a_stop_while_a_reload_holds_a_streamed_chunk_keeps_it(
    agent, notebook, loop_model_server, open_tab, jp_root_dir, jp_serverapp
):
    """A stop cancelled the batch being written: its text was taken from the pending
    batch, then the write waited (a reload of the file holds the room's writes) and the
    stop cancelled it. The stored conversation had the chunk, the tab never got it ('…wo'
    stored, '…wor' shown: CI at load 10, where a write waits a few turns of the loop)."""
    loop_model_server.script(say("word " * 2000, delay=0.01))
    async with open_tab(notebook) as tab:
        turn_id = await agent.start(notebook, "Tell me a long story.")
        await wait_for(lambda: len(_assistant_text(tab)) > 20)
        # A checkout of many cells: the room sets them a turn of the loop each, holding
        # its writes meanwhile, and the turn's next batch waits for it.
        lock = collaboration.update_lock(_room_of(jp_serverapp, notebook))
        cells = (f"z = {i}" for i in range(RELOADED_CELLS))
        replace_on_disk(jp_root_dir / notebook, notebook_json(*SOURCES, *cells))
        # asyncio.Lock keeps its waiters in ``_waiters``: the batch's write is one of them.
        await wait_for(lambda: lock.locked() and lock._waiters, timeout=20, interval=0.001)
        assert await agent.stop(notebook, turn_id) == {"stopped": True}
        await wait_for(lambda: agent_state(tab)["turn"]["state"] == "stopped", timeout=60)
        shown = _assistant_text(tab)
    conversation = await agent.conversation(notebook)
    said = [m["text"] for m in conversation["messages"] if m["role"] == "assistant"]
    assert said == [shown]


async def test_stop_while_waiting_for_approval(agent, notebook, loop_model_server, open_tab):
    loop_model_server.script(call_tools(("run_cells", {"cell_ids": ["c1"]})))
    async with open_tab(notebook) as tab:
        turn_id = await agent.start(notebook, "Run it.")
        approval = await wait_for(lambda: agent_state(tab).get("approval"))
        await agent.stop(notebook, turn_id)
        await wait_for(lambda: agent_state(tab)["turn"]["state"] == "stopped")
        assert "approval" not in agent_state(tab)
        assert tab.marker("c1") is None
    with pytest.raises(HTTPClientError) as late:
        await agent.approve(notebook, approval["id"])
    assert late.value.code in (404, 409)


class TestUnreachable:
    @pytest.fixture
    def loop_config(self, loop_model_server):
        closed = f"http://127.0.0.1:{_closed_port()}/v1"
        return openai_config(loop_model_server, openai_base_url=closed)

    async def test_unreachable_provider(self, agent, notebook, open_tab):
        conversation = await failed_turn(agent, notebook)
        assert "Could not reach" in conversation["turn"]["error"]
        assert "OPENAI_BASE_URL" in conversation["turn"]["error"]
        await assert_intact(open_tab, notebook)


async def test_a_stop_while_the_last_batch_waits_to_be_written_still_writes_it(
    notebook, open_tab, jp_root_dir, jp_serverapp
):
    """A stop can come as a step's stream ends, while its last batch waits to be written (a
    reload of the file holds the room's writes): the stop cancelled that write, and the tab
    never showed the batch, which the turn kept (and, before, kept none of the step's text).
    Here the test is the stop: it cancels the task closing the step's text, as
    ``AgentService.stop_turn`` cancels the turn's."""
    settings = jp_serverapp.web_app.settings
    docs = LiveDocuments(settings, logging.getLogger("test"))
    turn = TurnRecord(id="t1", state="running", model="m", provider="p", started_at=now_iso())
    async with open_tab(notebook) as tab:
        file_id = str(settings["file_id_manager"].get_id(notebook))  # the tab's room made it
        live = LiveTurn(docs, NotebookRef(notebook, file_id).room_id, turn)
        await live.begin(UserEntry(id="e1", kind="user", text="Tell me a story."))
        streamed = StreamedText(live, 3600)  # no timed batch: the test says when to write
        streamed.add("Once upon a time, ")
        await streamed.flush()
        await wait_for(lambda: _assistant_text(tab) == "Once upon a time, ")
        lock = collaboration.update_lock(_room_of(jp_serverapp, notebook))
        cells = (f"z = {i}" for i in range(RELOADED_CELLS))
        replace_on_disk(jp_root_dir / notebook, notebook_json(*SOURCES, *cells))
        await wait_for(lock.locked, timeout=20, interval=0.001)
        streamed.add("the end.")
        closing = asyncio.ensure_future(streamed.close())
        # asyncio.Lock keeps its waiters in ``_waiters``; the reload's own hash record waits
        # there too, so the write is known to wait only once ``close`` holds the stream's
        # lock (a task cancelled before it ran never writes at all: the test would be wrong).
        await wait_for(
            lambda: streamed._lock.locked() and lock._waiters, timeout=20, interval=0.001
        )
        assert lock.locked()
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
        await wait_for(lambda: not lock.locked(), timeout=60)
        await wait_for(lambda: _assistant_text(tab) == streamed.text, timeout=30)


def _room_of(serverapp, path):
    """The notebook's room in the test's server (its update lock holds writes in a reload)."""
    settings = serverapp.web_app.settings
    file_id = settings["file_id_manager"].get_id(path)
    extension = collaboration.extension(settings)
    return collaboration.rooms(extension)[NotebookRef(path, str(file_id)).room_id]


def _assistant_text(tab):
    return "".join(e.get("text", "") for e in agent_state(tab)["live"] if e["kind"] == "assistant")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TestMaskedErrors:
    CANARY = "canary-4b8e1f0d-secret"

    @pytest.fixture
    def loop_config(self, loop_model_server):
        return openai_config(loop_model_server, secrets=[self.CANARY])

    async def test_a_provider_error_quoting_a_secret_is_masked_everywhere_it_shows(
        self, agent, notebook, loop_model_server, open_tab
    ):
        """The turn's error and its notice say the same, masked (the panel shows it once)."""
        loop_model_server.script(fail(500, f"bad input near {self.CANARY}"))
        conversation = await failed_turn(agent, notebook)
        assert self.CANARY not in json.dumps(conversation)
        assert "bad input near" in conversation["turn"]["error"]
        assert notices(conversation)[-1] == conversation["turn"]["error"]
        async with open_tab(notebook) as tab:
            state = agent_state(tab)
            assert self.CANARY not in json.dumps(state)
            assert state["live"][-1]["text"] == state["turn"]["error"]
