"""A real Jupyter server process stopped by a signal in the middle of a run.

A hub, a service manager or Ctrl-C stops a server with SIGTERM or SIGINT (with no
terminal: JupyterHub's spawner sends SIGINT first). Either must end the server, and the
run it cut must say so once the server is back.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json, wait_for
from pycrdt import Map, Provider

from jupyter_loop.testing.chaos_agents import mcp_client
from jupyter_loop.testing.server_process import ServerProcess

LOOP = "import time\nfor i in range(6000):\n    print(i, flush=True)\n    time.sleep(0.01)"
HANG_GUARD = 30.0  # seconds; no speed claim (see bench/shutdown.py for figures)
# 20 s was passed once in CI under load by SIGINT (not reproduced here, 9 of 9): a hang
# never ends, a slow stop does; when it fails, the message has the server's stacks.


def cut_note(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stderr")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_mid_run_stops_the_server_and_the_run_is_cut_off(
    server: ServerProcess, sig: signal.Signals
):
    path = "stopped.ipynb"
    server.root.mkdir(parents=True)
    (server.root / path).write_text(notebook_json(LOOP, "print('queued')"), encoding="utf-8")
    server.start()
    await server.ready()
    await server.start_kernel(path)
    body = {"path": path, "cell_ids": ["c0", "c1"]}
    await server.api("api", "jupyter-loop", "runs", method="POST", body=body)
    await wait_for(lambda: (nb := server.saved(path)) and "10\n" in printed(nb), 60)
    try:
        server.stop(sig, timeout=HANG_GUARD)
    except subprocess.TimeoutExpired as e:
        pytest.fail(
            f"the server was still running {HANG_GUARD:g} s after {sig.name}; its log "
            f"and stacks:\n{e.output}"
        )
    saved = server.saved(path)
    assert "The server stopped during this run." in cut_note(saved.cells[0])
    assert saved.cells[1].outputs == []

    server.start()
    await server.ready()
    channel, notebook = await server.open_room(path)
    async with Provider(notebook.ydoc, channel):
        await wait_for(lambda: notebook.cell_number == 2)
        await asyncio.sleep(1)  # the room's Y-only state arrives after its cells
        states = [cell.get("execution_state") for cell in notebook.ycells]
        # Idle, or no state at all (a room rebuilt from the file on jupyter_ydoc 3).
        assert all(state in ("idle", None) for state in states), states
        markers = notebook.ydoc.get("jupyter_loop:execution", type=Map)
        ended = {cell_id: (markers.get(cell_id) or {}) for cell_id in ("c0", "c1")}
        assert ended["c0"].get("status", "cut_off") == "cut_off", ended
        assert ended["c1"].get("status", "aborted") == "aborted", ended
        assert not [m for m in ended.values() if m.get("state") in ("running", "queued")]


def printed(notebook: Any) -> str:
    return "".join(o.get("text", "") for o in notebook.cells[0].outputs)


@pytest.mark.timeout(180)
async def test_a_sigterm_during_an_agents_run_leaves_no_cell_running(tmp_path: Path):
    """An outside agent's ``run_cells`` (the MCP SDK's client) is cut short by the stop;
    its call ending must not take its runs out of the run ledger before the stop keeps
    them there, or their cells stay ``[*]`` in the store for good (chaos seed 2039 trial
    810)."""
    server = ServerProcess(
        tmp_path,
        "--JupyterLoopApp.approval_policy=always",
        "--YDocExtension.document_cleanup_delay=1",
    )
    path = "agent.ipynb"
    try:
        server.root.mkdir(parents=True)
        (server.root / path).write_text(notebook_json(LOOP, "print('queued')"), encoding="utf-8")
        server.start()
        await server.ready()
        await server.start_kernel(path)

        async def agent_runs() -> None:
            async with mcp_client(server) as session:
                arguments = {"path": path, "cell_ids": ["c0", "c1"], "wait_seconds": 60}
                await session.call_tool("run_cells", arguments)

        channel, notebook = await server.open_room(path)  # a tab, closed before the stop
        async with Provider(notebook.ydoc, channel):
            await wait_for(lambda: notebook.cell_number == 2)
            calling = asyncio.ensure_future(agent_runs())
            markers = notebook.ydoc.get("jupyter_loop:execution", type=Map)
            await wait_for(lambda: (markers.get("c0") or {}).get("state") == "running", 60)
        await asyncio.sleep(0.3)
        server.stop(signal.SIGTERM, timeout=HANG_GUARD)
        await asyncio.wait([calling], timeout=10)  # cut short with the server: any end

        server.start()
        await server.ready()
        channel, notebook = await server.open_room(path)
        async with Provider(notebook.ydoc, channel):
            await wait_for(lambda: notebook.cell_number == 2)
            markers = notebook.ydoc.get("jupyter_loop:execution", type=Map)

            def left_on() -> list[str]:
                marks = {c: markers.get(c) or {} for c in ("c0", "c1")}
                return [c for c, m in marks.items() if m.get("state") in ("running", "queued")]

            await asyncio.sleep(1)  # the room's Y-only state arrives after its cells
            await wait_for(lambda: not left_on(), 20)
    finally:
        server.kill()
