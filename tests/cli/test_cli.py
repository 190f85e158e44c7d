"""``jupyter loop`` against a real server process behind a JupyterHub-style base URL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json
from pycrdt import Map

from jupyter_loop.cli.connection import Api, Server
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
    assert out.count("line 0\n") == 1  # the outputs of the run before are not shown
    assert "before" in out and "ZeroDivisionError" in out
    assert "\x1b[" not in out  # piped: no colours
    assert "error" in err
    # Again: the failing cell keeps its last outputs while it waits for its turn (they are
    # cleared when its run starts); they are not shown as this run's.
    code, out, err = await loop(server, "run", "chatty.ipynb")
    assert code == 1
    assert out.splitlines().count("before") == 1, out


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
    assert "Server event loop lag (last 5 min): p95 " in out, out  # loop_health.py
    code, _, err = await loop(server, "--url", url, "--token", "wrong", "status")
    assert code == 4 and "403" in err  # refused


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


SLOW = "import time\nfor i in range(60):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"


async def started(server: ServerProcess, *args: str) -> Any:
    """``jupyter loop ARGS`` left running, once it has printed ``tick 3``."""
    await server.ready()
    environment = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(server.home / "runtime"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "jupyter_loop.cli", *args,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
    )  # fmt: skip
    assert process.stdout is not None
    seen = b""
    while b"tick 3\n" not in seen:
        line = await asyncio.wait_for(process.stdout.readline(), 120)
        assert line, "the client ended before the cell printed"
        seen += line
    return process, seen


@pytest.mark.timeout(240)
async def test_ctrl_c_interrupts_the_kernel_and_a_killed_client_leaves_the_run_going(
    server: ServerProcess,
) -> None:
    slow = SLOW.replace("range(60)", "range(100000)")
    (server.root / "slow.ipynb").write_text(notebook_json(slow, SLOW), encoding="utf-8")
    process, _ = await started(server, "run", "slow.ipynb", "1")
    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 1
    assert b"KeyboardInterrupt" in out and b"Interrupting the kernel" in err

    process, _ = await started(server, "run", "slow.ipynb", "c1")
    process.kill()  # the terminal goes away mid-run
    await process.wait()
    deadline = asyncio.get_running_loop().time() + 60
    while "tick 59" not in (server.root / "slow.ipynb").read_text(encoding="utf-8"):
        assert asyncio.get_running_loop().time() < deadline, "the run did not go on"
        await asyncio.sleep(0.2)


@pytest.mark.timeout(240)
async def test_ask_waits_for_an_approval_given_with_jupyter_loop_approve(
    server: ServerProcess, model: ScriptedModelServer
) -> None:
    (server.root / "ok.ipynb").write_text(notebook_json("print('ran it')"), encoding="utf-8")
    model.script(call_tools(("run_cells", {"cell_ids": ["c0"]})), say("It printed: ran it."))
    await server.ready()
    asking = asyncio.ensure_future(loop(server, "ask", "ok.ipynb", "run it", "--approval", "ask"))
    while True:  # the piped client prints the approval's id and the command that answers it
        status = await server.api("api", "jupyter-loop", "status")
        if status["turns"] and status["turns"][0]["state"] == "waiting_approval":
            break
        await asyncio.sleep(0.1)
    code, out, err = await loop(server, "status")
    assert "waiting_approval" in out
    async with Api(Server(server.url(), TOKEN)).room("ok.ipynb") as notebook:
        approval_id = notebook.ydoc.get("jupyter_loop:agent", type=Map).get("approval")["id"]
    code, out, err = await loop(server, "approve", "ok.ipynb", approval_id)
    assert (code, out) == (0, f"once: {approval_id}\n"), err
    code, out, err = await asking
    assert code == 0, err
    assert f"jupyter loop approve ok.ipynb {approval_id}" in out
    assert "It printed: ran it." in out


# A cell whose terminal rendering hides what it runs: the line is cleared and the cursor
# sent back, so a terminal shows only "print('hello')".
HIDING = "import os\nos.system('echo owned')  #\x1b[2K\r\x1b[1Aprint('hello')"
CONTROLS = ("\x1b", "\x07", "\r", "\x9b")


@pytest.mark.timeout(240)
async def test_ask_shows_control_characters_instead_of_sending_them_to_the_terminal(
    server: ServerProcess, model: ScriptedModelServer
) -> None:
    (server.root / "hide.ipynb").write_text(notebook_json(HIDING), encoding="utf-8")
    model.script(
        call_tools(("run_cells", {"cell_ids": ["c0"]})),
        call_tools(
            ("propose_modify", {"cell_id": "c0", "source": "1", "summary": "tidy\x1b]0;t\x07"})
        ),
        # OSC 52 writes the clipboard, OSC 0 the window's title; CSI 8-bit clears the screen.
        say("Done.\x1b]52;c;b3duZWQ=\x07 It ran.\x1b]0;pwned\x07\x9b2J"),
    )
    await server.ready()
    asking = asyncio.ensure_future(loop(server, "ask", "hide.ipynb", "run it", "--approval", "ask"))
    while True:
        status = await server.api("api", "jupyter-loop", "status")
        if status["turns"] and status["turns"][0]["state"] == "waiting_approval":
            break
        await asyncio.sleep(0.1)
    async with Api(Server(server.url(), TOKEN)).room("hide.ipynb") as notebook:
        approval_id = notebook.ydoc.get("jupyter_loop:agent", type=Map).get("approval")["id"]
    await loop(server, "approve", "hide.ipynb", approval_id)
    code, out, err = await asking
    assert code == 0, err
    assert [c for c in CONTROLS if c in out] == []
    approval = out.split("The agent asks to run c0:\n")[1].split("Waiting for an answer")[0]
    assert approval == "  │ import os\n  │ os.system('echo owned')  #␛[2K␍␛[1Aprint('hello')\n"
    assert "Done.␛]52;c;b3duZWQ=␇ It ran.␛]0;pwned␇\\x9b2J" in out
    assert "tidy␛]0;t␇" in out  # the proposal's summary


@pytest.mark.timeout(240)
async def test_url_and_token_work_after_the_subcommand_too(server: ServerProcess) -> None:
    (server.root / "one.ipynb").write_text(notebook_json("print(6 * 7)"), encoding="utf-8")
    url = f"http://127.0.0.1:{server.port}/user/ada/"
    elsewhere = {"JUPYTER_RUNTIME_DIR": str(server.home / "elsewhere")}  # only --url finds it
    code, out, err = await loop(
        server, "run", "one.ipynb", "c0", "--url", url, "--token", TOKEN, env=elsewhere
    )
    assert (code, out) == (0, "42\n"), err
    code, out, err = await loop(server, "status", "--url", url, "--token", TOKEN, env=elsewhere)
    assert code == 0 and "Nothing running." in out, err
    code, _, err = await loop(server, "--url", url, "status", "--token", "wrong", env=elsewhere)
    assert code == 4 and "403" in err  # refused


@pytest.mark.timeout(240)
async def test_cells_after_a_failure_are_reported_as_not_run(server: ServerProcess) -> None:
    cells = notebook_json("1 / 0", "print('never')")
    (server.root / "stops.ipynb").write_text(cells, encoding="utf-8")
    code, out, err = await loop(server, "run", "stops.ipynb")
    assert code == 1
    assert "never" not in out
    assert "  not run" in err.splitlines(), err
    assert "aborted" not in err


async def test_history_lists_the_terminal_runs_newest_first(server: ServerProcess) -> None:
    (server.root / "hist.ipynb").write_text(notebook_json("print('one')", "1 / 0"), "utf-8")
    code, _, err = await loop(server, "run", "hist.ipynb")
    assert code == 1, err
    code, out, err = await loop(server, "history", "hist.ipynb")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 2
    assert "  error  " in lines[0] and "cell c1" in lines[0] and "1 / 0" in lines[0]
    assert "  ok  " in lines[1] and "cell c0" in lines[1] and "print('one')" in lines[1]
    assert all("by the terminal client for " in line for line in lines)
    code, out, _ = await loop(server, "history", "hist.ipynb", "2")  # a cell by its number
    assert code == 0 and len(out.splitlines()) == 1 and "cell c1" in out
    code, out, _ = await loop(server, "history", "hist.ipynb", "c9")
    assert code == 0 and out == "No runs recorded.\n"


async def test_versions_and_restore_bring_back_an_overwritten_notebook(
    server: ServerProcess,
) -> None:
    notebook = server.root / "kept.ipynb"
    notebook.write_text(notebook_json("print('precious')"), "utf-8")
    code, _, err = await loop(server, "run", "kept.ipynb")  # the run's save keeps a version
    assert code == 0, err
    for _ in range(600):  # the run's end is saved within a second (30 s: a loaded machine)
        if json.loads(notebook.read_text("utf-8"))["cells"][0]["outputs"]:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the run's outputs were never saved")
    notebook.write_text(notebook_json("oops"), "utf-8")  # overwritten out of band
    code, out, err = await loop(server, "versions", "kept.ipynb")
    assert code == 0, err
    lines = out.splitlines()
    assert lines and all("  1 cell  " in line for line in lines), out
    # The newest version with the run's output (the room may since have taken in the
    # overwrite and saved it too).
    for line in lines:
        number = line.split()[0]
        kept = await server.api("api", "jupyter-loop", "versions", f"{number}?path=kept.ipynb")
        if kept["content"]["cells"][0]["outputs"]:
            break
    # The run's room is still loaded, but no tab is on it: nobody could accept a proposal,
    # so the version is written into the file (issue 42: "says it is open").
    code, out, err = await loop(server, "restore", "kept.ipynb", number)
    assert code == 0, err
    cell = json.loads(notebook.read_text("utf-8"))["cells"][0]
    assert out.startswith(f"Restored version {number} of kept.ipynb into the file"), out
    assert "To undo: jupyter loop restore kept.ipynb " in out
    assert "".join(cell["source"]) == "print('precious')"
    assert cell["outputs"], lines
    assert "precious" in "".join(cell["outputs"][0]["text"])
    code, out, _ = await loop(server, "versions", "kept.ipynb")
    assert f"restored from {number}" in out.splitlines()[0], out
    # The overwrite was kept before the restore replaced it: the restore can be undone.
    assert any("found on disk" in line for line in out.splitlines()[1:3]), out
    code, _, err = await loop(server, "restore", "kept.ipynb", "99999")
    assert code == 3 and "no version 99999" in err  # not found
    code, _, err = await loop(server, "restore", "kept.ipynb", "latest")
    assert code == 2 and "VERSION must be" in err
