"""An outside agent's request to run cells says who asks, and the terminal can answer it.

A real server process, the official MCP SDK client asking to run a cell under the ``ask``
policy: ``jupyter loop status`` lists the pending approval with the asker ("an MCP client
of ada, calling itself …") and the id ``jupyter loop approve`` takes, which answers it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from loop_helpers import notebook_json
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import call, text_of
from test_cli import loop

from jupyter_loop.testing.server_process import TOKEN, ServerProcess


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path,
        "--ServerApp.base_url=/user/ada/",
        "--JupyterLoopApp.approval_policy=ask",
        "--JupyterLoopApp.external_approval_timeout=120",
    )
    process.start()
    try:
        yield process
    finally:
        process.kill()


@pytest.mark.timeout(240)
async def test_status_lists_an_mcp_clients_approval_with_its_asker_and_id(
    server: ServerProcess,
) -> None:
    (server.root / "asked.ipynb").write_text(notebook_json("print('ran it')"), "utf-8")
    await server.ready()
    code, out, err = await loop(server, "status")
    assert code == 0 and "Nothing running." in out, err
    headers = {"Authorization": f"token {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(server.url("api", "jupyter-loop", "mcp"), http_client=http) as (
            read,
            write,
        ),
        ClientSession(
            read, write, client_info=types.Implementation(name="night-agent", version="1")
        ) as session,
    ):
        await session.initialize()
        running = asyncio.ensure_future(
            call(session, "run_cells", path="asked.ipynb", cell_ids=["c0"], wait_seconds=60)
        )
        deadline = asyncio.get_running_loop().time() + 60
        while asyncio.get_running_loop().time() < deadline:
            code, out, err = await loop(server, "status")
            if "approval " in out:
                break
            await asyncio.sleep(0.1)
        assert code == 0, err
        line = next(line for line in out.splitlines() if line.startswith("approval "))
        approval_id = line.split()[1]
        assert "asked.ipynb" in line and "cell c0" in line, line
        assert "asked by an MCP client of " in line and 'calling itself "night-agent"' in line
        assert f"jupyter loop approve asked.ipynb {approval_id}" in out
        assert "Nothing running." not in out
        code, out, err = await loop(server, "approve", "asked.ipynb", approval_id)
        assert (code, out) == (0, f"once: {approval_id}\n"), err
        result = await running
    assert not result.is_error and "ran it" in text_of(result)
    code, out, _ = await loop(server, "status")
    assert "approval " not in out
