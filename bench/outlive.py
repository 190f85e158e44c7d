"""A kernel that outlives its server: what a crash costs a running cell, and what the
keeper costs a cell that prints.

1. Crash. A real ``jupyter server`` (127.0.0.1, ``keep_kernels = "crash"``, the default)
   runs a cell that prints a numbered, time-stamped line 20 times a second for
   ``seconds``; 5 s in, the server alone is SIGKILLed (its kernel's keeper lives on),
   and started again 10 s later on the same directories. Reported: the lines expected,
   kept (distinct, in the saved notebook once the run ended) and doubled, whether they
   are in order, the kernel's PID before and after, and the seconds from the restarted
   server answering ``/api/status`` until a tab (a Y client of the room) shows the first
   line printed after that. The same with ``keep_kernels = "never"``, for comparison.
2. Cost. Two servers, one with keepers and one with ``keep_kernels = "never"``, run
   ``for i in range(lines): print(i)`` on a kernel of each, interleaved, ``runs`` times;
   each run timed from the request until a tab sees the run done. Reported: the median
   of each and their ratio (goal: at most 1.05).

Usage: ``python bench/outlive.py [runs] [lines] [seconds] [flush]`` (defaults 7, 100000,
40, 0). ``flush`` 1 measures the cost alone, with ``print(i, flush=True)``: one IOPub
message per line, the keeper's worst case.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
import psutil
from pycrdt import Map, Provider

from jupyter_loop.keeper.registry import list_entries
from jupyter_loop.testing.server_process import ServerProcess

PATH = "outlive.ipynb"
STEADY = """import time
x = 41
for i in range({count}):
    print(i, time.time(), flush=True)
    time.sleep(0.05)"""
LOOP = "for i in range({lines}):\n    print(i{flush})"


def write_notebook(server: ServerProcess, source: str) -> None:
    server.root.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(source, id="c0"))
    (server.root / PATH).write_text(nbformat.writes(notebook), encoding="utf-8")


def stamped(outputs: Any) -> list[tuple[int, float]]:
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("name") == "stdout")
    lines = [line.split() for line in text.splitlines()]
    return [(int(parts[0]), float(parts[1])) for parts in lines if len(parts) == 2]


async def until(predicate: Any, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(predicate)
        await asyncio.sleep(0.02)
    return value


def kernel_pid(server: ServerProcess) -> int | None:
    """The kernel's PID: from its keeper's entry, or else among the server's children."""
    entries = list_entries(server.kernels_dir)
    if entries:
        return entries[0].kernel_pid
    if server.process is None:
        return None
    for child in psutil.Process(server.process.pid).children(recursive=True):
        if any("ipykernel" in part for part in child.cmdline()):
            return int(child.pid)
    return None


def ended(server: ServerProcess) -> Any:
    """The saved notebook once its run ended (its count is written, or its cut-off note)."""
    notebook = server.saved(PATH)
    if notebook is None:
        return None
    cell = notebook.cells[0]
    return notebook if cell.execution_count or "cut off" in str(cell.outputs) else None


async def crash(home: Path, seconds: float, *options: str) -> None:
    server = ServerProcess(home, *options)
    count = int(seconds * 20)
    write_notebook(server, STEADY.format(count=count))
    try:
        server.start()
        await server.ready()
        await server.start_kernel(PATH)
        body = {"path": PATH, "cell_ids": ["c0"]}
        await server.api("api", "jupyter-loop", "runs", method="POST", body=body)
        await asyncio.sleep(5)
        before = kernel_pid(server)
        server.crash()
        await asyncio.sleep(10)
        server.start()
        await server.ready()
        answered = time.time()
        channel, live = await server.open_room(PATH)
        async with Provider(live.ydoc, channel):
            await until(lambda: live.cell_number == 1)
            try:
                await until(
                    lambda: any(t > answered for _, t in stamped(live.get_cell(0)["outputs"])),
                    timeout=15,
                )
                first_new: float | None = time.time() - answered
            except TimeoutError:
                first_new = None  # the kernel died with the server
        saved = await until(lambda: ended(server), timeout=seconds + 60)
        numbers = [n for n, _ in stamped(saved.cells[0].outputs)]
        after = kernel_pid(server)
    finally:
        server.kill()
    kept = len(set(numbers))
    print(f"lines expected {count}, kept {kept}, doubled {len(numbers) - kept}, ", end="")
    print(f"in order {numbers == sorted(numbers)}")
    print(f"kernel PID before {before}, after {after}")
    shown = "never" if first_new is None else f"{first_new:.2f}"
    print(f"seconds from the restarted server answering to the first new line: {shown}")


async def cost(home: Path, runs: int, lines: int, flush: bool) -> None:
    kept = ServerProcess(home / "kept")
    plain = ServerProcess(home / "plain", "--JupyterLoopApp.keep_kernels=never")
    times: dict[str, list[float]] = {"kept": [], "plain": []}
    servers = {"kept": kept, "plain": plain}
    try:
        for server in servers.values():
            write_notebook(server, LOOP.format(lines=lines, flush=", flush=True" if flush else ""))
            server.start()
        rooms = {}
        for name, server in servers.items():
            await server.ready()
            kernel_id = await server.start_kernel(PATH)
            channel, document = await server.open_room(PATH)
            rooms[name] = (server, kernel_id, channel, document)
        async with (
            Provider(rooms["kept"][3].ydoc, rooms["kept"][2]),
            Provider(rooms["plain"][3].ydoc, rooms["plain"][2]),
        ):
            for run in range(runs + 1):
                for name, (server, kernel_id, _, document) in rooms.items():
                    board = document.ydoc.get("jupyter_loop:execution", type=Map)
                    elapsed = await server.timed_run(PATH, kernel_id, board, timeout=300)
                    if run:  # the first run of each warms the kernel up
                        times[name].append(elapsed)
    finally:
        for server in servers.values():
            server.kill()
    medians = {name: statistics.median(values) for name, values in times.items()}
    kind = "flushed " if flush else ""
    print(
        f"{lines:,}-line {kind}print loop, median of {runs}: with keeper {medians['kept']:.3f} s, "
    )
    print(f"  without {medians['plain']:.3f} s, ratio {medians['kept'] / medians['plain']:.3f}x")


async def main(runs: int, lines: int, seconds: float, flush: bool) -> None:
    with tempfile.TemporaryDirectory() as home:
        if flush:  # the keeper's worst case: one message per line
            await cost(Path(home) / "cost", runs, lines, flush)
            return
        print("keep_kernels = crash (default):")
        await crash(Path(home) / "crash", seconds)
        print("keep_kernels = never (stock Jupyter: the kernel dies with the server):")
        await crash(Path(home) / "never", seconds, "--JupyterLoopApp.keep_kernels=never")
        await cost(Path(home) / "cost", runs, lines, flush)


if __name__ == "__main__":
    arguments = [float(a) for a in sys.argv[1:]]
    defaults = [7, 100_000, 40, 0]
    runs, lines, seconds, flush = arguments + defaults[len(arguments) :]
    asyncio.run(main(int(runs), int(lines), seconds, bool(flush)))
