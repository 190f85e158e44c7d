"""Codex, a real ACP agent from the registry (``npm install @zed-industries/codex-acp``),
pointed at the scripted model server through a real Jupyter server: the model's tool calls
are scripted, the agent is not.

Codex speaks only OpenAI's Responses API (codex-acp 0.16 refuses ``wire_api = "chat"``:
"`wire_api = "chat"` is no longer supported"), so its provider is the scripted server's
``/v1/responses``, given with codex-acp's ``-c key=value`` overrides (no config file) and a
``CODEX_HOME`` of the test's own.

Opt-in (an npm package, not a Python one): set ``JUPYTER_LOOP_CODEX`` to the
``codex-acp`` command (tried with codex-acp 0.16.0). Skipped otherwise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import (
    Agent,
    agent_state,
    api_of,
    approval_in,
    approve_each,
    asked_about_an_error,
    notices,
    said,
    second_turn_after_the_agent_process_ended,
)
from loop_helpers import notebook_json, wait_for

from jupyter_loop.testing import ScriptedModelServer, call_tools, fail, say
from jupyter_loop.testing.server_process import ServerProcess

CODEX = os.environ.get("JUPYTER_LOOP_CODEX", "")
pytestmark = pytest.mark.skipif(not CODEX, reason="JUPYTER_LOOP_CODEX names no codex-acp command")
RESPONSES = "/v1/responses"


def codex_command(executable: str, base_url: str) -> list[str]:
    """codex-acp with a model provider of the scripted server's Responses API."""
    provider = (
        f'{{name = "scripted", base_url = "{base_url}", env_key = "OPENAI_API_KEY", '
        'wire_api = "responses"}'
    )
    return [
        executable,
        "-c",
        'model = "scripted-tools"',
        "-c",
        'model_provider = "scripted"',
        "-c",
        f"model_providers.scripted = {provider}",
    ]


@pytest.fixture
def loop_config(
    loop_model_server: ScriptedModelServer, tmp_path: Path, request: pytest.FixtureRequest
) -> dict[str, Any]:
    # indirect parametrization: "preset", or a short idle time (the session ends between turns)
    param = getattr(request, "param", None)
    idle = param if isinstance(param, float) else 1800.0
    base = {"batch_interval": 0.01, "approval_policy": "ask", "acp_session_idle_timeout": idle}
    if param == "preset":  # found on PATH, set up by its own config
        return {**base, "acp_agents": {}, "acp_presets": True}
    home, codex_home = tmp_path / "agent-home", tmp_path / "codex-home"
    home.mkdir()
    codex_home.mkdir()
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "sk-codex-test"}
    command = codex_command(CODEX, loop_model_server.openai_base_url)
    return {**base, "acp_agents": {"codex": {"command": command, "env": env}}, "acp_presets": False}


@pytest.mark.timeout(300)
async def test_codex_reads_an_error_through_our_tools_and_proposes_a_fix(
    api: Any,
    notebook_in_tab: Any,
    run_cells: Any,
    loop_model_server: ScriptedModelServer,
    http_server_client: Any,
    jp_root_dir: Path,
) -> None:
    # Codex offers our MCP tools in a namespace, "mcp__jupyter_loop" (its name for the
    # server "jupyter-loop"); the scripted server answers in that namespace.
    done = await asked_about_an_error(
        Agent(api), "codex", "mcp__jupyter_loop__", loop_model_server, notebook_in_tab, run_cells
    )
    conversation, asked, proposals, live, source = (
        done.conversation, done.asked, done.proposals, done.live, done.source
    )  # fmt: skip
    path = done.path
    assert conversation["turn"]["state"] == "done", conversation["turn"]
    assert asked == []  # Codex asks no permission for these MCP tools (read, propose)
    tools = [e for e in live if e["kind"] == "tool"]
    assert [t["name"] for t in tools] == [
        "Tool: jupyter-loop/read_cell",
        "Tool: jupyter-loop/propose_modify",
    ]
    assert "ZeroDivisionError" in tools[0]["detail"]  # read through our tools, live
    assert [(p["kind"], p["new_source"], p["status"]) for p in proposals] == [
        ("modify", "1 / 1", "pending")
    ]
    saved = "".join(json.loads((jp_root_dir / path).read_text())["cells"][0]["source"])
    assert source == "1 / 0" and saved == "1 / 0"  # only proposed: not in the doc nor file
    assert live[-1]["text"] == "The cell divides by zero; I proposed 1 / 1."
    # The model was sent the cell's error as the output of its call, in the Responses API.
    sent = loop_model_server.bodies(RESPONSES)
    outputs = [i for i in sent[1]["input"] if i.get("type") == "function_call_output"]
    assert "ZeroDivisionError" in json.dumps(outputs)


@pytest.mark.timeout(300)
async def test_codex_runs_a_cell_only_after_our_approval(
    api: Any, notebook_in_tab: Any, loop_model_server: ScriptedModelServer, http_server_client: Any
) -> None:
    agent = Agent(api)
    async with notebook_in_tab("run.ipynb", "print(6 * 7)") as (path, tab):
        loop_model_server.script(
            call_tools(
                (
                    "mcp__jupyter_loop__run_cells",
                    {"path": path, "cell_ids": ["c0"], "wait_seconds": 30},
                )
            ),
            say("It printed 42."),
        )
        await agent.start(path, "Run the first cell.", agent="codex")
        approval = await approval_in(tab)
        assert tab.notebook.ycells[0].to_py().get("outputs") == []  # not before approval
        asked = await approve_each(agent, path, tab)
        conversation = await agent.ended(path, timeout=60)
        outputs = json.dumps(tab.notebook.ycells[0].to_py().get("outputs"))
    assert conversation["turn"]["state"] == "done", conversation["turn"]
    # Codex's own permission request for the MCP call (our approval card), then our
    # endpoint's approval of the run itself, with the cell's source.
    assert [a["id"] for a in asked][:1] == [approval["id"]] and len(asked) == 2, asked
    # (Codex names the tool by its MCP title: "Codex asks to: Approve Run cells".)
    assert "Codex asks to: Approve Run cells" in json.dumps(asked[0]["sources"]), asked[0]
    assert asked[1]["requested_by"].startswith("Codex for"), asked[1]
    assert asked[1]["cell_ids"] == ["c0"] and "print(6 * 7)" in json.dumps(asked[1]["sources"])
    assert "42" in outputs
    assert agent_state(tab)["live"][-1]["text"] == "It printed 42."


@pytest.mark.timeout(300)
async def test_a_model_that_refuses_codex_ends_the_turn_with_what_codex_says(
    api: Any, notebook_in_tab: Any, loop_model_server: ScriptedModelServer, http_server_client: Any
) -> None:
    """Codex answers the prompt with a JSON-RPC error whose data holds the model's answer:
    the conversation says it (its key masked), not that the turn failed unexpectedly."""
    agent = Agent(api)
    loop_model_server.set_default_reply(fail(401, "Incorrect API key provided: sk-codex-test."))
    async with notebook_in_tab("refused.ipynb", "1") as (path, _tab):
        await agent.start(path, "What does the cell do?", agent="codex")
        conversation = await agent.ended(path, timeout=120)
    error = conversation["turn"]["error"]
    assert conversation["turn"]["state"] == "error", conversation["turn"]
    assert error.startswith("Codex answered with an error: unexpected status 401"), error
    assert "Incorrect API key provided: ••••••." in error, error


@pytest.mark.timeout(300)
@pytest.mark.parametrize("loop_config", ["preset"], indirect=True)
async def test_the_codex_preset_on_path_starts_with_codex_own_config_file(
    api: Any,
    write_notebook: Any,
    loop_model_server: ScriptedModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The preset is the bare `codex-acp` found on the server's PATH; it reads its provider
    # from $CODEX_HOME/config.toml, as a user's Codex does.
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model = "scripted-tools"\nmodel_provider = "scripted"\n'
        "[model_providers.scripted]\n"
        f'name = "scripted"\nbase_url = "{loop_model_server.openai_base_url}"\n'
        'env_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
    )
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-codex-test")
    monkeypatch.setenv("PATH", f"{Path(CODEX).parent}{os.pathsep}{os.environ['PATH']}")
    listed = await api("api", "jupyter-loop", "agents")
    codex = next(a for a in listed["agents"] if a["name"] == "codex")
    assert (codex["label"], codex["available"]) == ("Codex", True)
    path = write_notebook("preset.ipynb", "1")
    loop_model_server.script(say("Hello from Codex."))
    agent = Agent(api)
    await agent.start(path, "Say hello.", agent="codex")
    conversation = await agent.ended(path, timeout=120)
    assert conversation["turn"]["state"] == "done", conversation["turn"]
    # What the agent said (its commands list, a notice, may come after it: Codex sends it
    # when it likes).
    assert said(conversation).endswith("Hello from Codex."), conversation["messages"]
    assert loop_model_server.bodies(RESPONSES)[-1]["model"] == "scripted-tools"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("loop_config", [1.0], indirect=True)
async def test_codex_loads_its_earlier_session_when_its_process_has_ended(
    api: Any, write_notebook: Any, loop_model_server: ScriptedModelServer, jp_serverapp: Any
) -> None:
    # A session ended (idle here; a server restart ends it the same way) is reopened with
    # session/load: codex-acp advertises loadSession and keeps its sessions in CODEX_HOME.
    path = write_notebook("resume.ipynb", "1")
    conversation = await second_turn_after_the_agent_process_ended(
        api, path, loop_model_server, jp_serverapp, "codex"
    )
    shown = notices(conversation)
    assert any("Codex loaded its earlier session" in n for n in shown), shown
    last = json.dumps(loop_model_server.bodies(RESPONSES)[-1]["input"])
    assert "Remember the word apples." in last and "I will remember apples." in last


@pytest.mark.timeout(300)
async def test_codex_goes_on_with_its_session_after_a_real_server_restart(
    loop_model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # A real server process, stopped and started again on the same state: the session id
    # kept in acp_sessions.json is loaded (session/load) by a new codex-acp process.
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    env = {"HOME": str(codex_home), "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "sk-x"}
    agents = {
        "codex": {"command": codex_command(CODEX, loop_model_server.openai_base_url), "env": env}
    }
    server = ServerProcess(
        tmp_path / "server",
        "--JupyterLoopApp.acp_presets=False",
        f"--JupyterLoopApp.acp_agents={json.dumps(agents)}",
    )
    try:
        server.root.mkdir(parents=True)
        (server.root / "restart.ipynb").write_text(notebook_json("1"), encoding="utf-8")
        server.start()
        await server.ready()
        agent = Agent(api_of(server))
        loop_model_server.script(say("I will remember apples."), say("You said apples."))
        await agent.start("restart.ipynb", "Remember the word apples.", agent="codex")
        first = await agent.ended("restart.ipynb", timeout=120)
        assert first["turn"]["state"] == "done", first["turn"]
        server.stop()
        server.start()
        await server.ready()
        await agent.start("restart.ipynb", "Which word?", agent="codex")
        second = await agent.ended("restart.ipynb", timeout=120)
        # A server stopping ends its agents' processes: codex-acp would not end by itself
        # (it does not exit when its stdin closes), so a killed server leaves it running.
        server.stop()
        await wait_for(lambda: not _processes_of(loop_model_server.openai_base_url), timeout=20)
    finally:
        server.kill()
    assert second["turn"]["state"] == "done", second["turn"]
    shown = notices(second)
    assert any("Codex loaded its earlier session" in n for n in shown), shown
    assert not [n for n in shown if "new session" in n], shown
    last = json.dumps(loop_model_server.bodies(RESPONSES)[-1]["input"])
    assert "Remember the word apples." in last and "I will remember apples." in last
    assert said(second).endswith("You said apples."), second["messages"]


def _processes_of(base_url: str) -> list[int]:
    """The pids of the codex-acp processes pointed at this model server (their argv)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if proc.name.isdigit() and base_url in argv and "codex-acp" in argv:
            found.append(int(proc.name))
    return found
