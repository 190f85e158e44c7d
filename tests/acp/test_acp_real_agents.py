"""Real ACP agents from the package registries, each pointed at the scripted model server,
through a real Jupyter server: the model's tool calls are scripted, the agent is not.

Opt-in (the agents are npm packages, not Python ones): set ``JUPYTER_LOOP_QWEN`` to the
``qwen`` command of ``npm install @qwen-code/qwen-code`` (tried with 0.15.10). Skipped
otherwise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import (
    OPENAI_CHAT,
    Agent,
    approve_each,
    asked_about_an_error,
    notices,
    second_turn_after_the_agent_process_ended,
)

from jupyter_loop.testing import ScriptedModelServer, call_tools, fail, say

QWEN = os.environ.get("JUPYTER_LOOP_QWEN", "")
pytestmark = pytest.mark.skipif(not QWEN, reason="JUPYTER_LOOP_QWEN names no qwen command")


@pytest.fixture
def loop_config(
    loop_model_server: ScriptedModelServer, tmp_path: Path, request: pytest.FixtureRequest
) -> dict[str, Any]:
    home = tmp_path / "agent-home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "OPENAI_API_KEY": "sk-real-agent-test",
        "OPENAI_BASE_URL": loop_model_server.openai_base_url,
        "OPENAI_MODEL": "scripted-tools",
    }
    return {
        "acp_agents": {"qwen": {"command": [QWEN, "--acp"], "env": env, "label": "Qwen Code"}},
        "acp_presets": False,
        "batch_interval": 0.01,
        "approval_policy": "ask",
        # indirect parametrization: a short idle time (its session then ends between turns)
        "acp_session_idle_timeout": getattr(request, "param", 1800.0),
    }


@pytest.mark.timeout(300)
async def test_qwen_reads_an_error_through_our_tools_and_proposes_a_fix(
    api: Any,
    notebook_in_tab: Any,
    run_cells: Any,
    loop_model_server: ScriptedModelServer,
    http_server_client: Any,
) -> None:
    done = await asked_about_an_error(
        Agent(api), "qwen", "mcp__jupyter-loop__", loop_model_server, notebook_in_tab, run_cells
    )
    conversation, asked, proposals, live = done.conversation, done.asked, done.proposals, done.live
    assert conversation["turn"]["state"] == "done", conversation["turn"]
    # Qwen asks permission for a call of our MCP tools that changes something (our approval
    # card, in its words, asked by it for its person), not for read_cell, which our endpoint
    # marks read-only (readOnlyHint: Qwen allows such tools unasked).
    assert len(asked) == 1, asked
    assert "Qwen Code asks to" in json.dumps(asked[0]["sources"])
    assert "propose_modify" in json.dumps(asked[0]["sources"])
    assert asked[0]["cell_ids"] == [] and asked[0]["requested_by"].startswith("Qwen Code for ")
    tools = [e for e in live if e["kind"] == "tool"]
    assert "ZeroDivisionError" in tools[0]["detail"]  # read through our tools, live
    assert [(p["kind"], p["new_source"], p["status"]) for p in proposals] == [
        ("modify", "1 / 1", "pending")
    ]
    assert live[-1]["text"] == "The cell divides by zero; I proposed 1 / 1."


@pytest.mark.timeout(300)
async def test_qwen_runs_a_cell_only_after_our_approval(
    api: Any, notebook_in_tab: Any, loop_model_server: ScriptedModelServer, http_server_client: Any
) -> None:
    agent = Agent(api)
    async with notebook_in_tab("run.ipynb", "print(6 * 7)") as (path, tab):
        loop_model_server.script(
            call_tools(
                (
                    "mcp__jupyter-loop__run_cells",
                    {"path": path, "cell_ids": ["c0"], "wait_seconds": 30},
                )
            ),
            say("It printed 42."),
        )
        await agent.start(path, "Run the first cell.", agent="qwen")
        asked = await approve_each(agent, path, tab)
        conversation = await agent.ended(path, timeout=60)
        outputs = json.dumps(tab.notebook.ycells[0].to_py().get("outputs"))
    assert conversation["turn"]["state"] == "done", conversation["turn"]
    # Qwen's own permission request, then our endpoint's approval of the run itself.
    assert len(asked) == 2, asked
    assert "run_cells" in json.dumps(asked[0]["sources"])
    assert asked[1]["cell_ids"] == ["c0"] and "print(6 * 7)" in json.dumps(asked[1]["sources"])
    assert "42" in outputs


@pytest.mark.timeout(300)
@pytest.mark.parametrize("loop_config", [1.0], indirect=True)
async def test_qwen_loads_its_earlier_session_when_its_process_has_ended(
    api: Any, write_notebook: Any, loop_model_server: ScriptedModelServer, jp_serverapp: Any
) -> None:
    # A session ended (idle here; a server restart ends it the same way) is reopened with
    # session/load: Qwen Code advertises loadSession and keeps its sessions in its HOME.
    path = write_notebook("resume.ipynb", "1")
    conversation = await second_turn_after_the_agent_process_ended(
        api, path, loop_model_server, jp_serverapp, "qwen"
    )
    shown = notices(conversation)
    assert any("Qwen Code loaded its earlier session" in n for n in shown), shown
    last = json.dumps(loop_model_server.bodies(OPENAI_CHAT)[-1])
    assert "Remember the word apples." in last  # the model was sent the earlier turn


@pytest.mark.timeout(300)
async def test_a_model_that_refuses_qwen_ends_the_turn_with_what_qwen_says(
    api: Any, notebook_in_tab: Any, loop_model_server: ScriptedModelServer, http_server_client: Any
) -> None:
    """Qwen Code answers the prompt with a JSON-RPC error whose details are the model's
    words: the conversation says them (masked), not that the turn failed unexpectedly."""
    agent = Agent(api)
    refusal = fail(401, "Incorrect API key provided: sk-real-agent-test.")
    loop_model_server.set_default_reply(refusal)
    async with notebook_in_tab("refused.ipynb", "1") as (path, _tab):
        await agent.start(path, "What does the cell do?", agent="qwen")
        conversation = await agent.ended(path, timeout=120)
    assert conversation["turn"]["state"] == "error", conversation["turn"]
    # The key Qwen was given (acp_agents' env, OPENAI_API_KEY) is masked as the server's are.
    assert conversation["turn"]["error"] == (
        "Qwen Code answered with an error: 401 Incorrect API key provided: ••••••."
    )
