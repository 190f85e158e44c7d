"""What an ACP session started and a killed server left running is ended at the next start
(``acp/left_running.py``): a real server process, SIGKILLed, started again on the same
state. The agent's launcher leaves a child behind (``sleep``), as a launcher whose child
ignores its closed input (codex-acp 0.16.0) does; a second server of the same user, still
running, keeps its own."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from agent_helpers import Agent, api_of
from loop_helpers import notebook_json

from jupyter_loop.testing.server_process import ServerProcess

LINGER = "JUPYTER_LOOP_TEST_LINGER"
"""The environment variable whose value tells each test's lingering child apart."""


def server_with_lingering_agent(home: Path) -> ServerProcess:
    # The agent's launcher starts a child that outlives it, then becomes the agent.
    launcher = f"sleep 600 & exec {sys.executable} -m jupyter_loop.testing.acp_agent"
    agents = {"lingering": {"command": ["sh", "-c", launcher], "env": {LINGER: str(home)}}}
    return ServerProcess(
        home,
        "--JupyterLoopApp.acp_presets=False",
        f"--JupyterLoopApp.acp_agents={json.dumps(agents)}",
    )


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.kill()
    for process in lingering(tmp_path):  # what a failed test leaves
        process.kill()


def lingering(under: Path) -> list[psutil.Process]:
    """The ``sleep`` children the agents of servers under ``under`` started."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(LINGER, "").startswith(str(under)) and process.name() == (
                "sleep"
            ):
                found.append(process)
        except (psutil.Error, OSError):
            continue
    return found


async def a_turn(server: ServerProcess) -> None:
    server.root.mkdir(parents=True, exist_ok=True)
    (server.root / "nb.ipynb").write_text(notebook_json("1"), encoding="utf-8")
    server.start()
    await server.ready()
    agent = Agent(api_of(server))
    await agent.start("nb.ipynb", "say hello", agent="lingering")
    ended = await agent.ended("nb.ipynb", timeout=90)
    assert ended["turn"]["state"] == "done", ended["turn"]


@pytest.mark.timeout(180)
async def test_a_killed_servers_agent_processes_are_ended_at_the_next_start(
    servers: list[ServerProcess], tmp_path: Path
) -> None:
    killed = server_with_lingering_agent(tmp_path / "killed")
    other = server_with_lingering_agent(tmp_path / "other")
    servers += [killed, other]
    await a_turn(killed)
    await a_turn(other)
    left = lingering(tmp_path / "killed")
    kept = lingering(tmp_path / "other")
    assert len(left) == 1 and len(kept) == 1, (left, kept)

    killed.crash()  # SIGKILL: the server ends nothing
    await asyncio.sleep(1)
    assert left[0].is_running(), "the child ended with its server: nothing to show here"

    killed.start()
    await killed.ready()
    gone, _ = await asyncio.to_thread(psutil.wait_procs, left, 30)
    assert gone, "the killed server's agent left a process that its next start did not end"
    # Another server of the same user still runs: its agent's processes are its own.
    assert kept[0].is_running()
