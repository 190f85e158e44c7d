"""``jupyter loop`` against a real server process behind a JupyterHub-style base URL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import notebook_json

from jupyter_loop.testing import ScriptedModelServer, call_tools, say
from jupyter_loop.testing.server_process import TOKEN, ServerProcess

CHATTY = "for i in range(300):\n    print('line', i, flush=True)"
FAILING = "print('before')\n1 / 0"


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def server(tmp_path: Path, model: ScriptedModelServer) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path,
        "--ServerApp.base_url=/user/ada/",
        "--JupyterLoopApp.agent_provider=openai",
        f"--JupyterLoopApp.openai_base_url={model.openai_base_url}",
        "--JupyterLoopApp.openai_api_key=sk-test-cli",
        "--JupyterLoopApp.agent_model=scripted-tools",
        "--JupyterLoopApp.approval_policy=always",
    )
    process.start()
    try:
        yield process
    finally:
        process.kill()


async def loop(server: ServerProcess, *args: str, env: dict[str, str] | None = None) -> Any:
    """``jupyter loop ARGS`` as a user runs it (here: ``python -m jupyter_loop.cli``)."""
    await server.ready()
    environment = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(server.home / "runtime"),
        "PYTHONPATH": os.pathsep.join(sys.path),
        **(env or {}),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "jupyter_loop.cli", *args,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode, out.decode(), err.decode()


@pytest.mark.timeout(240)
async def test_run_prints_every_line_and_exits_1_on_an_error(server: ServerProcess) -> None:
    (server.root / "chatty.ipynb").write_text(notebook_json(CHATTY, FAILING), encoding="utf-8")
    code, out, err = await loop(server, "run", "chatty.ipynb", "1")
    assert code == 0, err
    assert out.splitlines() == [f"line {i}" for i in range(300)]
    assert "cell 1 (c0)" in err
    code, out, err = await loop(server, "run", "chatty.ipynb")  # Run All
    assert code == 1
    assert out.splitlines()[:300] == [f"line {i}" for i in range(300)]
    assert "before" in out and "ZeroDivisionError" in out
    assert "\x1b[" not in out  # piped: no colours
    assert "error" in err


@pytest.mark.timeout(240)
async def test_run_with_url_and_token_and_status(server: ServerProcess) -> None:
    (server.root / "one.ipynb").write_text(notebook_json("print(6 * 7)"), encoding="utf-8")
    url = f"http://127.0.0.1:{server.port}/user/ada/"
    code, out, err = await loop(
        server, "--url", url, "--token", TOKEN, "run", "one.ipynb", "c0",
        env={"JUPYTER_RUNTIME_DIR": str(server.home / "elsewhere")},
    )  # fmt: skip
    assert (code, out) == (0, "42\n"), err
    code, out, _ = await loop(server, "status")
    assert code == 0 and "Nothing running." in out
    code, _, err = await loop(server, "--url", url, "--token", "wrong", "status")
    assert code == 2 and "403" in err


@pytest.mark.timeout(240)
async def test_ask_streams_the_answer_and_lists_proposals(
    server: ServerProcess, model: ScriptedModelServer
) -> None:
    (server.root / "ask.ipynb").write_text(notebook_json("1/0"), encoding="utf-8")
    model.script(
        call_tools(("propose_modify", {"cell_id": "c0", "source": "1/1", "summary": "no zero"})),
        say("Dividing by zero fails; I proposed 1/1 instead."),
    )
    code, out, err = await loop(server, "ask", "ask.ipynb", "why does it fail?")
    assert code == 0, err
    assert "Dividing by zero fails; I proposed 1/1 instead." in out
    assert "proposed an edit to cell 1" in out
    proposal = next(line for line in out.splitlines() if line.startswith("proposal "))
    proposal_id = proposal.split()[1].rstrip(":")
    assert "modify c0 (pending)" in proposal
    code, out, err = await loop(server, "accept", "ask.ipynb", proposal_id)
    assert (code, out) == (0, f"accepted: {proposal_id}\n"), err
