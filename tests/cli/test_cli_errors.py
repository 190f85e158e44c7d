"""``jupyter loop`` says what went wrong in one line, with an exit status per kind of failure.

Against a real server process: a wrong cell, a notebook that does not exist, a refused
token, no server, and a reader that closes the pipe early (``| head``). A traceback only
with ``--debug``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_helpers import notebook_json
from test_cli import loop

from jupyter_loop.cli.main import EXIT_STATUSES
from jupyter_loop.testing.server_process import ServerProcess


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path, "--ServerApp.base_url=/user/ada/")
    process.start()
    try:
        yield process
    finally:
        process.kill()


def one_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("jupyter loop: "), err
    return lines[0]


@pytest.mark.timeout(240)
async def test_mistakes_are_told_in_one_line_with_a_status_per_kind(
    server: ServerProcess,
) -> None:
    (server.root / "one.ipynb").write_text(notebook_json("print(1)", "print(2)"), "utf-8")
    code, _, err = await loop(server, "run", "one.ipynb", "z")  # no such cell id
    assert code == EXIT_STATUSES["usage"]
    assert "no cell 'z'" in one_line(err) and "1 to 2" in err
    code, _, err = await loop(server, "run", "one.ipynb", "c")  # the start of two ids
    assert code == EXIT_STATUSES["usage"]
    assert "'c' starts 2 cell ids (c0, c1)" in one_line(err)
    code, _, err = await loop(server, "run", "one.ipynb", "9")  # out of range
    assert code == EXIT_STATUSES["usage"]
    assert "no cell 9" in one_line(err) and "1 to 2" in err
    code, _, err = await loop(server, "history", "one.ipynb", "9")
    assert code == EXIT_STATUSES["usage"] and "no cell 9" in one_line(err)
    code, _, err = await loop(server, "run", "nosuch.ipynb")
    assert code == EXIT_STATUSES["not found"]
    assert "No notebook 'nosuch.ipynb'" in one_line(err)
    code, _, err = await loop(server, "restore", "one.ipynb", "99999")
    assert code == EXIT_STATUSES["not found"] and "no version 99999" in one_line(err)
    code, _, err = await loop(server, "approve", "one.ipynb", "a-nosuch")
    assert code == EXIT_STATUSES["not found"] and "a-nosuch" in one_line(err)
    code, _, err = await loop(server, "--token", "wrong", "status")
    assert code == EXIT_STATUSES["refused"] and "403" in one_line(err)
    dead = f"http://127.0.0.1:{server.port + 1 if server.port < 65535 else 1}/"
    code, _, err = await loop(server, "--url", dead, "status")
    assert code == EXIT_STATUSES["no server"] and "Cannot reach" in one_line(err)
    # With --debug, the traceback too.
    code, _, err = await loop(server, "run", "one.ipynb", "z", "--debug")
    assert code == EXIT_STATUSES["usage"] and "Traceback" in err
    # A cell id may be given by its first characters when they name one cell.
    code, out, err = await loop(server, "run", "one.ipynb", "c1")
    assert (code, out) == (0, "2\n"), err


@pytest.mark.timeout(240)
async def test_a_reader_that_closes_the_pipe_ends_the_client_quietly(
    server: ServerProcess,
) -> None:
    (server.root / "kept.ipynb").write_text(notebook_json("print(1)"), "utf-8")
    await server.ready()
    environment = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(server.home / "runtime"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    command = f"{sys.executable} -m jupyter_loop.cli versions kept.ipynb | true"  # reads nothing
    shell = await asyncio.create_subprocess_exec(
        "bash", "-c", f"set -o pipefail; {command}",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
    )  # fmt: skip
    out, err = await asyncio.wait_for(shell.communicate(), 120)
    assert err.decode() == ""
    assert shell.returncode == EXIT_STATUSES["closed pipe"]
