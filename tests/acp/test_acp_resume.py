"""An ACP agent's session across a server restart: a real server process, stopped and
started again on the same state, with the scripted ACP agent (``session/load`` where it
advertises ``loadSession``, a plain notice where it does not)."""

from __future__ import annotations

import json
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import Agent, api_of, notices
from loop_helpers import notebook_json

from jupyter_loop.testing.server_process import ServerProcess

SCRIPTED = [sys.executable, "-m", "jupyter_loop.testing.acp_agent"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    agents = {
        # Keeps its sessions on disk and advertises loadSession, as Qwen Code does.
        "keeper": {"command": SCRIPTED, "env": {"SCRIPTED_ACP_STATE": str(tmp_path / "kept")}},
        # Remembers a session only while its process lives.
        "forgetful": {"command": SCRIPTED},
    }
    process = ServerProcess(
        tmp_path,
        "--JupyterLoopApp.acp_presets=False",
        f"--JupyterLoopApp.acp_agents={json.dumps(agents)}",
    )
    yield process
    process.kill()


def said(conversation: dict[str, Any], turn_id: str | None = None) -> str:
    return "\n".join(
        m["text"]
        for m in conversation["messages"]
        if m["role"] == "assistant" and (turn_id is None or m.get("turn_id") == turn_id)
    )


@pytest.mark.timeout(240)
async def test_a_session_is_loaded_after_a_restart_or_the_conversation_says_it_is_new(
    server: ServerProcess,
) -> None:
    server.root.mkdir(parents=True)
    for name in ("keeps.ipynb", "forgets.ipynb"):
        (server.root / name).write_text(notebook_json("1"), encoding="utf-8")
    server.start()
    await server.ready()
    agent = Agent(api_of(server))
    ids = {}
    for path, name in (("keeps.ipynb", "keeper"), ("forgets.ipynb", "forgetful")):
        await agent.start(path, "say the first question\nsession", agent=name)
        first = await agent.ended(path, timeout=90)
        assert first["turn"]["state"] == "done", first["turn"]
        ids[name] = re.findall(r"session (\S+)", said(first))[0]
    server.stop()

    kept = server.home / "data" / "jupyter_loop" / "acp_sessions.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # owner-only, as the tokens are
    assert ids["keeper"] in kept.read_text(encoding="utf-8")

    server.start()
    await server.ready()
    resumed_turn = await agent.start("keeps.ipynb", "recall\nsession", agent="keeper")
    resumed = await agent.ended("keeps.ipynb", timeout=90)
    fresh_turn = await agent.start("forgets.ipynb", "recall\nsession", agent="forgetful")
    fresh = await agent.ended("forgets.ipynb", timeout=90)

    # The agent that can load its session goes on with it, remembering the earlier turn;
    # what it replays while loading is not written into the conversation a second time.
    text = said(resumed, resumed_turn)
    assert f"session {ids['keeper']}" in text
    assert "remembered: say the first question" in text
    assert "(earlier)" not in json.dumps(resumed)
    assert not [n for n in notices(resumed) if "new session" in n]

    # The one that cannot starts anew, and says so rather than silently forgetting.
    text = said(fresh, fresh_turn)
    assert ids["forgetful"] not in text and "remembered: nothing" in text
    assert [n for n in notices(fresh) if "forgetful" in n and "started a new session" in n] == [
        "The server restarted: forgetful started a new session: it does not remember the "
        "earlier turns of this conversation."
    ]
