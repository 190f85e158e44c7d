"""Seconds a Jupyter server takes to stop on SIGTERM / SIGINT with a cell running.

For each signal, twice: a server with jupyter-loop running a printing cell through
``POST /api/jupyter-loop/runs`` (no client connected), and the same server without
jupyter-loop, its kernel kept busy by a raw ``jupyter_client`` (the baseline). The timer
starts when the signal is sent and stops when the server process has exited.

With configurable-http-proxy on ``PATH`` it also times a JupyterHub stopping a
single-user server (jupyter-loop running the same cell): from the hub API's DELETE until
the hub lists no server (its spawner sends SIGINT, then SIGTERM after 10 s, then SIGKILL).

Usage: ``python bench/shutdown.py [rounds]`` (default 1).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from jupyter_loop.testing.hub_process import HubProcess
from jupyter_loop.testing.server_process import ServerProcess

PATH = "busy.ipynb"
LOOP = "import time\nfor i in range(100000):\n    print(i, flush=True)\n    time.sleep(0.01)"


def notebook() -> str:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(LOOP)
    cell["id"] = "c0"
    nb.cells.append(cell)
    return nbformat.writes(nb)


async def seconds_to_stop(sig: signal.Signals, with_loop: bool) -> float:
    home = Path(tempfile.mkdtemp(prefix="loop-shutdown-"))
    if not with_loop:
        (home / "config").mkdir()
        config = {"ServerApp": {"jpserver_extensions": {"jupyter_loop": False}}}
        (home / "config" / "jupyter_server_config.json").write_text(json.dumps(config))
    server = ServerProcess(home)
    server.root.mkdir(parents=True)
    (server.root / PATH).write_text(notebook(), encoding="utf-8")
    server.start()
    try:
        await server.ready()
        kernel_id = await server.start_kernel(PATH)
        if with_loop:
            body = {"path": PATH, "cell_ids": ["c0"]}
            await server.api("api", "jupyter-loop", "runs", method="POST", body=body)
        else:
            client = await server.kernel_client(kernel_id)
            client.execute(LOOP)
        await asyncio.sleep(3)  # well into the run: outputs flowing, saves under way
        return server.stop(sig)
    finally:
        server.kill()


async def seconds_for_hub_to_stop() -> float:
    hub = HubProcess(Path(tempfile.mkdtemp(prefix="loop-shutdown-hub-")), [])
    hub.start()
    try:
        await hub.ready()
        base = await hub.spawn("bench")
        model = {"type": "notebook", "format": "json", "content": json.loads(notebook())}
        await hub.call(f"{base}api/contents/{PATH}", method="PUT", body=model)
        session = {"path": PATH, "type": "notebook", "name": "", "kernel": {"name": "python3"}}
        await hub.call(f"{base}api/sessions", method="POST", body=session)
        body = {"path": PATH, "cell_ids": ["c0"]}
        await hub.call(f"{base}api/jupyter-loop/runs", method="POST", body=body)
        await asyncio.sleep(3)
        start = time.monotonic()
        await hub.stop_server("bench")
        return time.monotonic() - start
    finally:
        hub.stop()


async def main(rounds: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        for with_loop in (True, False):
            times = [await seconds_to_stop(sig, with_loop) for _ in range(rounds)]
            label = "with jupyter-loop" if with_loop else "without jupyter-loop"
            figures = " ".join(f"{t:.2f}" for t in times)
            print(f"{sig.name:7} {label:21} seconds to exit: {figures}", flush=True)
    if shutil.which("configurable-http-proxy"):
        times = [await seconds_for_hub_to_stop() for _ in range(rounds)]
        figures = " ".join(f"{t:.2f}" for t in times)
        print(f"hub stopping a single-user server with jupyter-loop: {figures}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1))
