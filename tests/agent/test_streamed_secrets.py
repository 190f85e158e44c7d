"""What an assistant streams is masked before any tab sees it: the built-in assistant's
text and an ACP agent's message chunks, a secret split across chunks included. Every state
a real Y client (a tab) passes through is checked, not only the last; the stored
conversation and the live view agree; no file the server writes keeps the secret."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import Agent, agent_state, openai_config
from loop_helpers import wait_for
from pycrdt import Map

from jupyter_loop.agent.shared_turn import AGENT_MAP
from jupyter_loop.secrets import DEFAULT_MASK
from jupyter_loop.testing import Reply

CANARY = "canary-5d1e7b93a0-stream"


class Watched:
    """Every state of a tab's agent map, as JSON, one per transaction the tab applied."""

    def __init__(self, tab: Any) -> None:
        self.tab = tab
        self.states: list[str] = []
        board = tab.notebook.ydoc.get(AGENT_MAP, type=Map)
        # Kept: a subscription that is dropped stops hearing.
        self._subscription = board.observe_deep(
            lambda _: self.states.append(json.dumps(board.to_py(), default=str))
        )

    def assistant_texts(self) -> list[str]:
        live = agent_state(self.tab)["live"]
        return [e["text"] for e in live if e["kind"] == "assistant"]


def files_holding(root: Path, secret: str) -> list[str]:
    """Every file under ``root`` whose bytes hold ``secret`` (journals, stores, run history,
    the YStore)."""
    needle = secret.encode()
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def stored_texts(conversation: dict[str, Any], role: str) -> list[str]:
    return [m["text"] for m in conversation["messages"] if m["role"] == role]


class TestBuiltinAssistant:
    @pytest.fixture
    def loop_config(self, loop_model_server: Any) -> dict[str, Any]:
        return openai_config(loop_model_server, secrets=[CANARY])

    async def test_a_secret_streamed_by_the_model_is_masked_in_every_state_a_tab_sees(
        self, agent: Agent, write_notebook: Any, open_tab: Any, loop_model_server: Any,
        tmp_path: Path,
    ) -> None:  # fmt: skip
        path = write_notebook("stream.ipynb", "x = 1")
        # Chunks of 5 characters, each its own batch: the secret arrives in several pieces.
        text = f"The key is {CANARY}, keep it safe. And again: {CANARY}"
        loop_model_server.script(Reply(text=text, chunk_size=5, delay=0.03))
        async with open_tab(path) as tab:
            watched = Watched(tab)
            await agent.start(path, "What is the key?")
            conversation = await agent.ended(path)
            await wait_for(lambda: agent_state(tab).get("turn", {}).get("state") == "done")
            shown = watched.assistant_texts()
        assert len(watched.states) > 5  # the stream was seen as it went, not only at the end
        # Not even its first piece: the tail that could begin it waits for the rest.
        assert [s for s in watched.states if CANARY[:8] in s] == []
        assert stored_texts(conversation, "assistant") == shown
        masked = f"The key is {DEFAULT_MASK}, keep it safe. And again: {DEFAULT_MASK}"
        assert shown == [masked]
        assert CANARY not in json.dumps(await agent.journal(path))
        assert files_holding(tmp_path, CANARY) == []


# The agent holds the secret in its environment (a prompt holding it would be masked).
SCRIPTED = {
    "command": [sys.executable, "-m", "jupyter_loop.testing.acp_agent"],
    "env": {"LEAKED": CANARY},
}


class TestAcpAgent:
    @pytest.fixture
    def loop_config(self) -> dict[str, Any]:
        return {
            "acp_agents": {"scripted": SCRIPTED},
            "allowed_agents": ["scripted"],
            "acp_presets": False,
            "batch_interval": 0.01,
            "secrets": [CANARY],
        }

    async def test_an_agents_streamed_chunks_tool_titles_and_notices_are_masked(
        self, agent: Agent, notebook_in_tab: Any, tmp_path: Path
    ) -> None:
        # ``say`` streams its text as two chunks: the first ends inside the secret.
        assert 4 < len(f"key {CANARY} ok") // 2 < 4 + len(CANARY)
        async with notebook_in_tab("acp.ipynb", "x = 1") as (path, tab):
            watched = Watched(tab)
            await agent.start(
                path,
                "say key ${LEAKED} ok\ntool read ${LEAKED}\nthink hm ${LEAKED}\nsay Done.",
                agent="scripted",
            )
            conversation = await agent.ended(path)
            state = await wait_for(
                lambda: agent_state(tab) if agent_state(tab)["turn"]["state"] == "done" else None
            )
            shown = watched.assistant_texts()
        assert len(watched.states) > 3
        # Not even its first piece: the tail that could begin it waits for the rest.
        assert [s for s in watched.states if CANARY[:8] in s] == []
        assert shown == [f"key {DEFAULT_MASK} ok", "Done."]
        assert stored_texts(conversation, "assistant") == shown
        tools = [e for e in state["live"] if e["kind"] == "tool"]
        assert [t["summary"] for t in tools] == [f"read {DEFAULT_MASK}"]
        assert stored_texts(conversation, "tool") == [f"read {DEFAULT_MASK}"]
        thoughts = [e["text"] for e in state["live"] if e["kind"] == "thought"]
        assert thoughts == stored_texts(conversation, "thought") == [f"hm {DEFAULT_MASK}"]
        assert CANARY not in json.dumps(conversation)
        assert CANARY not in json.dumps(await agent.journal(path))
        assert files_holding(tmp_path, CANARY) == []
