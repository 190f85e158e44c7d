"""A real Jupyter server process stopped by a signal in the middle of a run.

A hub, a service manager or Ctrl-C stops a server with SIGTERM or SIGINT (with no
terminal: JupyterHub's spawner sends SIGINT first). Either must end the server, and the
run it cut must say so once the server is back.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import notebook_json, wait_for
from pycrdt import Map, Provider

from jupyter_loop.testing.server_process import ServerProcess

LOOP = "import time\nfor i in range(6000):\n    print(i, flush=True)\n    time.sleep(0.01)"
HANG_GUARD = 30.0  # seconds; no speed claim (see bench/shutdown.py for figures)
# 20 s was passed once in CI under load by SIGINT (not reproduced here, 9 of 9): a hang
# never ends, a slow stop does; when it fails, the message has the server's stacks.


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path)
    yield process
    process.kill()


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
