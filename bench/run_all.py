"""Run All of many trivial cells through jupyter-loop against raw jupyter_client.

Starts a real ``jupyter server`` (127.0.0.1) with jupyter-loop, a notebook of N cells
``x = i`` and its kernel, then times, interleaved and on the same kernel:

* jupyter-loop: one run request for every cell, until a Y client joined to the room sees
  the last cell marked done (what a browser tab waits for);
* raw, one at a time: an ``AsyncKernelClient`` sends each cell and waits for its reply
  and idle status before the next;
* raw, pipelined: the same client sends all N at once (as stock JupyterLab's Run All
  does), then waits for the last reply and idle status.

Usage: ``python bench/run_all.py [cells] [rounds]`` (defaults 300 and 3). Prints the
median time per cell of each way and the ratios.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from pycrdt import Map, Provider

from jupyter_loop.testing.server_process import ServerProcess, reply_and_idle

PATH = "run_all.ipynb"


async def raw_one_at_a_time(client: AsyncKernelClient, cells: int) -> float:
    start = time.perf_counter()
    for i in range(cells):
        await reply_and_idle(client, client.execute(f"x = {i}"))
    return time.perf_counter() - start


async def raw_pipelined(client: AsyncKernelClient, cells: int) -> float:
    start = time.perf_counter()
    ids = [client.execute(f"x = {i}") for i in range(cells)]
    await reply_and_idle(client, ids[-1])
    return time.perf_counter() - start


async def loop_run_all(server: ServerProcess, kernel_id: str, board: Map, cells: int) -> float:
    ids = tuple(f"c{i}" for i in range(cells))
    return await server.timed_run(PATH, kernel_id, board, cell_ids=ids, timeout=300)


async def drain(client: AsyncKernelClient) -> None:
    """Forget what the raw client's channels still hold (status of earlier runs)."""
    for receive in (client.get_iopub_msg, client.get_shell_msg):
        while True:
            try:
                await receive(timeout=0.2)
            except Exception:  # queue.Empty: drained
                break


async def main(cells: int, rounds: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="loop-bench-"))
    server = ServerProcess(home)
    (home / "root").mkdir()
    notebook = nbformat.v4.new_notebook()
    for i in range(cells):
        notebook.cells.append(nbformat.v4.new_code_cell(f"x = {i}", id=f"c{i}"))
    (home / "root" / PATH).write_text(nbformat.writes(notebook))
    server.start()
    results: dict[str, list[float]] = {"raw": [], "pipelined": [], "loop": []}
    try:
        await server.ready()
        kernel_id = await server.start_kernel(PATH)
        client = await server.kernel_client(kernel_id)
        channel, document = await server.open_room(PATH)
        async with Provider(document.ydoc, channel):
            board = document.ydoc.get("jupyter_loop:execution", type=Map)
            await loop_run_all(server, kernel_id, board, min(cells, 20))  # warm up
            for _ in range(rounds):
                await drain(client)
                results["raw"].append(await raw_one_at_a_time(client, cells))
                await drain(client)
                results["pipelined"].append(await raw_pipelined(client, cells))
                await asyncio.sleep(0.5)
                results["loop"].append(await loop_run_all(server, kernel_id, board, cells))
                await asyncio.sleep(0.5)
        client.stop_channels()
    finally:
        server.kill()
    per_cell = {way: statistics.median(times) / cells * 1000 for way, times in results.items()}
    print(f"Run All of {cells} cells `x = i`, {rounds} rounds interleaved, same kernel")
    print(f"raw jupyter_client, one at a time: {per_cell['raw']:.2f} ms per cell")
    print(f"raw jupyter_client, all at once:   {per_cell['pipelined']:.2f} ms per cell")
    print(f"jupyter-loop (last cell done):     {per_cell['loop']:.2f} ms per cell")
    print(
        f"ratio: {per_cell['loop'] / per_cell['raw']:.2f}x one at a time, "
        f"{per_cell['loop'] / per_cell['pipelined']:.2f}x all at once (goal <= 1.3x one at a time)"
    )


if __name__ == "__main__":
    arguments = [int(value) for value in sys.argv[1:3]]
    asyncio.run(main(*arguments) if arguments else main(300, 3))
