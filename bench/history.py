"""The run history's cost: recording overhead, query time, and size after many runs.

1. Recording overhead: two real ``jupyter server`` processes (127.0.0.1), one with the
   history on and one with it off (``--JupyterLoopApp.history=False``), each with its own
   kernel; ``1 + 1`` is run on one then the other, interleaved, over the runs socket as
   JupyterLab sends it, timed until a Y client sees the run done (as
   ``bench/execution_overhead.py``). Prints both medians and their difference (goal:
   <= 1 ms).
2. A history query for a cell with 10,000 runs (the default page of 100, and the largest
   page the REST API gives, 1,000), median over 50 queries (goal: <= 20 ms); and the
   stale-marks query (each cell's last run) over the same notebook.
3. The database after 100,000 recorded runs (500 cells, a new source every 10th run)
   against its byte budget, at the default budget and at a small one (8 MiB), which
   forces the clean-up.

Usage: ``python bench/history.py [runs] [--same]`` (default 200 runs each way for part 1;
``--same``: part 1 only, with the history off on both servers, to measure the noise).
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import nbformat
from pycrdt import Array, Doc, Map, Provider

from jupyter_loop.document import source_hash
from jupyter_loop.execution.history import RunHistory
from jupyter_loop.execution.queue import outputs_digest
from jupyter_loop.execution.run_origin import RunEntry, RunOrigin
from jupyter_loop.testing.server_process import ServerProcess

SETTLE = 0.02
"""Pause before each timed run (see ``bench/execution_overhead.py``)."""
DEFAULT_BYTES = 64 * 1024 * 1024


async def recording_overhead(runs: int, same: bool = False) -> tuple[float, float]:
    """Median milliseconds of a trivial cell with the history on and off (``same``: off
    on both servers, to see the difference two servers make by themselves)."""
    servers = []
    for history in ("False", "False") if same else ("True", "False"):
        home = Path(tempfile.mkdtemp(prefix="loop-bench-history-"))
        (home / "root").mkdir()
        notebook = nbformat.v4.new_notebook()
        notebook.cells.append(nbformat.v4.new_code_cell("1 + 1", id="c0"))
        (home / "root" / "bench.ipynb").write_text(nbformat.writes(notebook))
        server = ServerProcess(home, f"--JupyterLoopApp.history={history}")
        server.start()
        servers.append(server)
    try:
        async with contextlib.AsyncExitStack() as providers:
            return await interleaved(servers, providers, runs)
    finally:
        for server in servers:
            server.kill()


async def interleaved(
    servers: list[ServerProcess], providers: contextlib.AsyncExitStack, runs: int
) -> tuple[float, float]:
    """Median milliseconds of each server's runs, one after the other."""
    ways = []
    for server in servers:
        await server.ready()
        kernel_id = await server.start_kernel("bench.ipynb")
        channel, document = await server.open_room("bench.ipynb")
        await providers.enter_async_context(Provider(document.ydoc, channel))
        board = document.ydoc.get("jupyter_loop:execution", type=Map)
        socket = await server.open_run_socket()
        ways.append((server, kernel_id, board, socket))
    for _ in range(10):  # warm up both
        for server, kernel_id, board, socket in ways:
            await server.timed_run("bench.ipynb", kernel_id, board, socket=socket)
    times: list[list[float]] = [[], []]
    for number in range(runs):
        order = list(enumerate(ways))  # each goes first every other time: no order bias
        for index, (server, kernel_id, board, socket) in order[:: 1 if number % 2 else -1]:
            await asyncio.sleep(SETTLE)
            timed = await server.timed_run("bench.ipynb", kernel_id, board, socket=socket)
            times[index].append(timed)
    for _, _, _, socket in ways:
        socket.close()
    return statistics.median(times[0]) * 1000, statistics.median(times[1]) * 1000


def entry(cell: str, index: int, source: str) -> RunEntry:
    now = time.time()
    origin = RunOrigin("ada", "tab")
    return RunEntry(
        "json:notebook:bench", "bench.ipynb", cell, f"run{index}", origin,
        source_hash(source), source, "kernel-1", "start-1", now, now, now + 0.01, "ok",
        execution_count=index, outputs_digest="0123456789abcdef",
    )  # fmt: skip


def record_cost() -> float:
    """Median microseconds the event loop spends recording one run: the entry built with
    its source hashed, the outputs digest, the hand-over to the writer thread."""
    doc = Doc()
    cell = doc.get("cell", type=Map)
    cell["outputs"] = Array([Map({"output_type": "execute_result", "data": Map({"a": "2"})})])
    with tempfile.TemporaryDirectory() as folder:
        history = RunHistory(Path(folder) / "history.sqlite3")
        samples = []
        for index in range(2000):
            start = time.perf_counter()
            digest = outputs_digest(cell)
            history.record(replace(entry("c0", index, "1 + 1"), outputs_digest=digest))
            samples.append(time.perf_counter() - start)
        history.close()
    return statistics.median(samples) * 1e6


def query_times() -> tuple[float, float, float]:
    """Median milliseconds: a page of 100 runs, a page of 1,000, and the last runs."""
    with tempfile.TemporaryDirectory() as folder:
        history = RunHistory(Path(folder) / "history.sqlite3", max_runs_per_cell=20_000)
        source = "import pandas as pd\ndf = pd.read_csv('prices.csv')\ndf.describe()"
        for index in range(10_000):
            history.record(entry("busy", index, source if index % 10 else f"{source}\n# {index}"))
        for index in range(200):
            history.record(entry(f"other{index}", index, f"x = {index}"))
        history.settle(timeout=120)
        results = []
        for call in (
            lambda: history.runs("json:notebook:bench", "busy", 100),
            lambda: history.runs("json:notebook:bench", "busy", 1000),
            lambda: history.last_runs("json:notebook:bench"),
        ):
            samples = []
            for _ in range(50):
                start = time.perf_counter()
                call()
                samples.append(time.perf_counter() - start)
            results.append(statistics.median(samples) * 1000)
        history.close()
    return results[0], results[1], results[2]


def size_after(runs: int, budget: int) -> tuple[int, int, float]:
    """Bytes on disk and runs kept after ``runs`` recorded runs; seconds it took."""
    with tempfile.TemporaryDirectory() as folder:
        history = RunHistory(Path(folder) / "history.sqlite3", max_bytes=budget)
        start = time.perf_counter()
        for index in range(runs):
            cell = f"cell{index % 500}"
            version = index // 5000  # a new source every 10th run of a cell
            source = f"# {cell} version {version}\nresult = compute({index % 500}, {version})\n"
            history.record(entry(cell, index, source + "plot(result)\n" * 3))
        history.settle(timeout=600)
        took = time.perf_counter() - start
        used, kept = history.bytes_used(), history.count()
        history.close()
    return used, kept, took


async def main(runs: int, same: bool) -> None:
    if same:
        first, second = await recording_overhead(runs, same=True)
        print(f"both off: {first:.2f} ms and {second:.2f} ms ({first - second:+.2f} ms)")
        return
    on_ms, off_ms = await recording_overhead(runs)
    print(f"1. recording: {runs} runs of `1 + 1` each way, interleaved, medians over the socket")
    print(f"   history on:  {on_ms:.2f} ms")
    print(f"   history off: {off_ms:.2f} ms")
    print(f"   difference:  {on_ms - off_ms:+.2f} ms (goal <= 1 ms)")
    print(f"   event-loop cost of recording one run: {record_cost():.1f} µs (median of 2,000)")
    page, big_page, last = query_times()
    print("2. a cell with 10,000 runs (medians of 50 queries)")
    print(f"   newest 100:   {page:.2f} ms (goal <= 20 ms)")
    print(f"   newest 1,000: {big_page:.2f} ms")
    print(f"   last run of each cell (stale marks): {last:.2f} ms")
    print("3. after 100,000 recorded runs (500 cells)")
    for budget in (DEFAULT_BYTES, 8 * 1024 * 1024):
        used, kept, took = size_after(100_000, budget)
        print(
            f"   budget {budget / 2**20:.0f} MiB: {used / 2**20:.2f} MiB on disk "
            f"({used / budget:.0%} of it), {kept:,} runs kept, recorded in {took:.1f} s"
        )


if __name__ == "__main__":
    numbers = [arg for arg in sys.argv[1:] if arg.isdigit()]
    asyncio.run(main(int(numbers[0]) if numbers else 200, "--same" in sys.argv))
