"""An ACP agent's terminals (``terminal/*``): offered only to a person with Jupyter's
terminals right, run in the notebook's folder, their output masked before it is cut,
journalled, and ended with the session. The scripted agent (written with the ACP SDK)
runs as a real process through a real Jupyter server, under a sync and an async
authorizer that allow terminals and a pair that does not."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from agent_helpers import Agent, is_running, said
from authorizers import both

SCRIPTED = {"command": [sys.executable, "-m", "jupyter_loop.testing.acp_agent"]}
CANARY = "canary-acp-7f3a9e21c4"
HALF = CANARY.split("-")[-1]
"""The canary's tail: what an output cut before masking would leak."""


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {
        "acp_agents": {"scripted": SCRIPTED},
        "acp_presets": False,
        "batch_interval": 0.01,
        "secrets": [CANARY],
    }


@pytest.mark.parametrize("authorizer", both("Everything"))
async def test_a_command_runs_in_the_notebooks_folder_and_is_journalled(
    agent: Agent, write_notebook: Any, jp_root_dir: Any
) -> None:
    path = write_notebook("work/here.ipynb", "1")
    (jp_root_dir / "other").mkdir()
    script = (
        f"capabilities\nrun pwd; echo done\nrunin {jp_root_dir / 'other'} pwd\n"
        "runin /tmp pwd\nrunkill sleep 60"
    )
    await agent.start(path, script, agent="scripted")
    conversation = await agent.ended(path)
    text = said(conversation)
    assert conversation["turn"]["state"] == "done"
    assert '"terminal": true' in text
    assert f"exit 0: {(jp_root_dir / 'work').resolve()}\ndone" in text
    assert f"exit 0: {(jp_root_dir / 'other').resolve()}\n" in text  # a folder inside the root
    assert "/tmp is outside the server's root directory" in text
    assert "killed: SIGTERM" in text  # terminal/kill ends it, its exit status says how
    journal = await agent.journal(path)
    commands = [e for e in journal if e["action"] == "terminal_command"]
    shown = [c["details"]["command"][2] for c in commands]
    assert shown == ["pwd; echo done", "pwd", "sleep 60"]
    assert [e["details"]["terminal_id"] for e in journal if e["action"] == "terminal_kill"]
    assert commands[0]["by"].startswith("scripted for ")
    assert commands[0]["turn_id"] == conversation["turn"]["id"]
    exits = [e for e in journal if e["action"] == "terminal_exit"]  # before wait_for_exit returned
    assert exits and exits[0]["details"]["exit_code"] == 0


@pytest.mark.parametrize("authorizer", both("NoTerminals"))
async def test_without_the_terminals_right_no_command_runs(
    agent: Agent, write_notebook: Any, jp_root_dir: Any
) -> None:
    path = write_notebook("refused.ipynb", "1")
    await agent.start(path, "capabilities\nrun touch made-by-agent", agent="scripted")
    conversation = await agent.ended(path)
    text = said(conversation)
    assert conversation["turn"]["state"] == "done"
    assert '"terminal": false' in text
    assert "may not run commands on the server" in text
    assert "terminals:write, terminals:execute" in text
    assert not (jp_root_dir / "made-by-agent").exists()
    journal = await agent.journal(path)
    assert not [e for e in journal if e["action"].startswith("terminal_")]


async def test_a_turn_that_may_not_run_code_runs_no_command(
    agent: Agent, write_notebook: Any
) -> None:
    path = write_notebook("propose.ipynb", "1")
    await agent.start(path, "capabilities\nrun echo hi", agent="scripted", approval="never")
    text = said(await agent.ended(path))
    assert '"terminal": false' in text and "mode may not run code" in text


async def test_the_output_is_masked_before_it_is_cut(agent: Agent, write_notebook: Any) -> None:
    path = write_notebook("masked.ipynb", "1")
    # The prompt is masked, so the command builds the canary: the agent never saw it.
    printed = f"printf 'start {CANARY.removesuffix(HALF)}%s end' {HALF}"
    await agent.start(path, f"run {printed}\nruncut 20 {printed}", agent="scripted")
    conversation = await agent.ended(path)
    text = said(conversation)
    assert "exit 0: start •••••• end" in text
    assert "exit 0 (truncated): ••••• end" in text  # 20 bytes, whole characters
    assert HALF not in text and HALF[::-1] not in text  # the reversed output, too
    assert CANARY not in json.dumps(await agent.journal(path))


async def test_every_command_ends_with_its_session(
    agent: Agent, write_notebook: Any, jp_serverapp: Any
) -> None:
    path = write_notebook("ends.ipynb", "1")
    # A command that started another: both end with the session (its process group).
    await agent.start(path, "spawn sleep 300 & echo $!; echo $$; wait", agent="scripted")
    text = said(await agent.ended(path))
    pids = [int(p) for p in re.findall(r"\d+", text.split("spawned term-1:", 1)[1])]
    assert len(pids) == 2 and all(is_running(pid) for pid in pids)
    service = jp_serverapp.web_app.settings["jupyter_loop_acp"]
    await service.stop()  # what stop_extension awaits
    assert not any(is_running(pid) for pid in pids)
