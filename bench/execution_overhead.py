"""Overhead of a trivial cell through jupyter-loop against raw jupyter_client.

Starts a real ``jupyter server`` (127.0.0.1) with jupyter-loop, opens a notebook session,
and times ``1 + 1`` N times each way on the same kernel, each way of jupyter-loop
alternating with raw runs:

* jupyter-loop: from the run request until a Y client joined to the notebook's room sees
  the run marked done (what a browser tab waits for), the request sent over the runs
  websocket (as JupyterLab with jupyter-loop sends it) and, for comparison, as
  ``POST runs`` over a kept-alive connection (as other clients may);
* raw: an ``AsyncKernelClient`` on the kernel's connection file, from ``execute`` until
  the reply and the idle status have both arrived.

Usage: ``python bench/execution_overhead.py [runs] [--repeat N]`` (default 200 runs, one
round). Prints each round's medians; with several rounds (each on a server of its own:
on this 2-core machine one server process's luck drifts a ratio by a few hundredths), the
median of the rounds' ratios too.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from pycrdt import Map, Provider
from tornado.websocket import WebSocketClientConnection

from jupyter_loop.testing.server_process import ServerProcess, reply_and_idle

SETTLE = 0.02
"""Pause before each timed run, so each starts on a settled kernel and server (the kernel
still records history and the server still reads the previous run's messages just after
a run): one run's latency, as a user running a cell sees it, for both ways alike."""


async def raw_run(client: AsyncKernelClient) -> float:
    start = time.perf_counter()
    await reply_and_idle(client, client.execute("1 + 1"), timeout=10)
    return time.perf_counter() - start


Ratios = tuple[float, float]
"""One round's loop/raw ratios: over the runs socket, over ``POST runs``."""


async def main(runs: int, repeat: int) -> None:
    rounds = [await one_round(runs) for _ in range(repeat)]
    if repeat > 1:
        socket, rest = (statistics.median(ratios) for ratios in zip(*rounds, strict=True))
        print(f"median of {repeat} rounds: socket {socket:.2f}x, POST runs {rest:.2f}x")


async def one_round(runs: int) -> Ratios:
    home = Path(tempfile.mkdtemp(prefix="loop-bench-"))
    server = ServerProcess(home)
    (home / "root").mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("1 + 1", id="c0"))
    (home / "root" / "bench.ipynb").write_text(nbformat.writes(notebook))
    server.start()
    try:
        await server.ready()
        kernel_id = await server.start_kernel("bench.ipynb")
        client = await server.kernel_client(kernel_id)
        channel, document = await server.open_room("bench.ipynb")
        async with Provider(document.ydoc, channel):
            board = document.ydoc.get("jupyter_loop:execution", type=Map)
            socket = await server.open_run_socket()
            for _ in range(10):  # warm up every path
                await raw_run(client)
                for way in (socket, None):
                    await server.timed_run("bench.ipynb", kernel_id, board, socket=way)
            # One way at a time against raw, alternating: each gets as many raw runs
            # beside it (a raw run may meet what a loop run left for later, a save say).
            by_socket = await alternate(server, client, kernel_id, board, socket, runs)
            by_rest = await alternate(server, client, kernel_id, board, None, runs)
            socket.close()
        client.stop_channels()
    finally:
        server.kill()
    print(f"runs: {runs} of `1 + 1`, alternating with raw, same kernel (medians)")
    raw_ms, loop_ms = by_socket
    print(f"raw jupyter_client:  {raw_ms:.2f} ms")
    print(f"jupyter-loop:        {loop_ms:.2f} ms (request on the runs socket, as JupyterLab")
    print("                     sends it -> run done seen by a Y client)")
    print(f"ratio:               {loop_ms / raw_ms:.2f}x (goal <= 1.25x)")
    socket_ratio = loop_ms / raw_ms
    raw_ms, loop_ms = by_rest
    ratio = loop_ms / raw_ms
    print(f"over POST runs:      {loop_ms:.2f} ms against raw {raw_ms:.2f} ms: {ratio:.2f}x")
    return socket_ratio, ratio


async def alternate(
    server: ServerProcess,
    client: AsyncKernelClient,
    kernel_id: str,
    board: Map,
    socket: WebSocketClientConnection | None,
    runs: int,
) -> tuple[float, float]:
    """Median milliseconds of raw runs and jupyter-loop runs, one after the other."""
    raw, loop = [], []
    for _ in range(runs):
        await asyncio.sleep(SETTLE)
        raw.append(await raw_run(client))
        await asyncio.sleep(SETTLE)
        loop.append(await server.timed_run("bench.ipynb", kernel_id, board, socket=socket))
    return statistics.median(raw) * 1000, statistics.median(loop) * 1000


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=1, help="rounds, each on its own server")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.repeat))
