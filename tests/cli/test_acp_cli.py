"""``jupyter loop ask --agent``: an ACP agent's turn from the terminal, into the same
conversation, against a real server process whose agents are set on its command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_helpers import notebook_json
from test_cli import loop

from jupyter_loop.testing.server_process import ServerProcess

AGENTS = {"scripted": {"command": [sys.executable, "-m", "jupyter_loop.testing.acp_agent"]}}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path,
        "--ServerApp.base_url=/user/ada/",
        f"--JupyterLoopApp.acp_agents={json.dumps(AGENTS)}",  # JSON on the command line
        "--JupyterLoopApp.acp_presets=False",
    )
    process.start()
    try:
        yield process
    finally:
        process.kill()


@pytest.mark.timeout(240)
async def test_ask_with_an_acp_agent_streams_its_answer(server: ServerProcess) -> None:
    (server.root / "acp.ipynb").write_text(notebook_json("1 / 0"), encoding="utf-8")
    code, out, err = await loop(
        server,
        "ask",
        "acp.ipynb",
        "say The cell divides by zero.\ntool looked",
        "--agent",
        "scripted",
    )
    assert code == 0, err
    assert "The cell divides by zero." in out and "looked" in out
    code, _, err = await loop(server, "ask", "acp.ipynb", "crash", "--agent", "scripted")
    assert code == 1 and "scripted exited with status 3" in err + _
