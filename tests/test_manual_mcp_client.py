"""The manual's MCP Python SDK client runs as printed: the block after
``<!-- mcp-python-client -->`` in docs/manual/mcp-and-terminal.md, against a real server
process, with a scoped token made by ``jupyter loop token create``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import notebook_json
from test_cli import loop

from jupyter_loop.testing.server_process import ServerProcess

MANUAL = Path(__file__).resolve().parent.parent / "docs" / "manual" / "mcp-and-terminal.md"


def snippet() -> str:
    text = MANUAL.read_text("utf-8")
    after = text.split("<!-- mcp-python-client -->", 1)[1]
    return after.split("```python\n", 1)[1].split("\n```", 1)[0]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path)
    process.start()
    try:
        yield process
    finally:
        process.kill()


@pytest.mark.timeout(240)
async def test_the_manuals_mcp_client_reads_a_notebook(server: ServerProcess) -> None:
    (server.root / "analysis.ipynb").write_text(notebook_json("total = 6 * 7"), "utf-8")
    code, out, err = await loop(server, "token", "create", "--scope", "read")
    assert code == 0, err
    token = out.splitlines()[-1]
    program = snippet()
    assert '"http://127.0.0.1:8888/api/jupyter-loop/mcp"' in program and '"jlt_…"' in program
    program = program.replace(
        "http://127.0.0.1:8888/api/jupyter-loop/mcp", server.url("api", "jupyter-loop", "mcp")
    ).replace("jlt_…", token)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", program,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ},
    )  # fmt: skip
    out_bytes, err_bytes = await asyncio.wait_for(process.communicate(), 120)
    printed = out_bytes.decode()
    assert process.returncode == 0, err_bytes.decode()[-2000:]
    assert "'read_notebook'" in printed.splitlines()[0]
    assert "Notebook analysis.ipynb." in printed and "total = 6 * 7" in printed
