"""Opening a big notebook's room: jupyter-loop against the same server without it.

For each N, a notebook of N code cells ``x = 1``, each with one small ``execute_result``
output, is written to disk; a real ``jupyter server`` (127.0.0.1) starts on it, with
jupyter-loop and then without it (``jpserver_extensions: {"jupyter_loop": false}``, the
same venv: stock jupyter-collaboration); a Y client (pycrdt's ``Provider`` over
``TornadoChannel``, as ``jupyter loop`` and the tests join a room) asks for the
collaboration session and joins the room. Printed per run:

* ``open``: seconds from the session request until the client's document holds all N
  cells (what a tab waits for before it shows the notebook);
* ``then``: the longest the server then takes to answer ``GET /api/status``, asked every
  0.1 s for 3 s after the sync: work the room's load started that holds the event loop
  after the tab has its document;
* ``rss``: the server's resident memory before the request and once the client is synced.

Then the ratio of open times between consecutive N (about the ratio of the N's when the
cost is linear, its square when quadratic).

Usage: ``python bench/big_notebook.py [N ...] [--timeout S] [--only jupyter-loop|stock]``
(default 2000 5000 10000, both).
The machine these figures come from is shared: expect noise of tens of per cent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import nbformat
import psutil
from pycrdt import Provider

from jupyter_loop.testing.server_process import ServerProcess

PATH = "big.ipynb"


def big_notebook(cells: int) -> str:
    nb = nbformat.v4.new_notebook()
    for i in range(cells):
        cell = nbformat.v4.new_code_cell("x = 1", id=f"c{i}", execution_count=i + 1)
        cell.outputs = [
            nbformat.v4.new_output(
                "execute_result", data={"text/plain": "1"}, execution_count=i + 1
            )
        ]
        nb.cells.append(cell)
    return nbformat.writes(nb)


def rss_mb(pid: int) -> float:
    return float(psutil.Process(pid).memory_info().rss) / 1e6


async def busy_after(server: ServerProcess, window: float = 3.0) -> float:
    """The longest wait for ``GET /api/status`` over ``window`` seconds (asked every 0.1 s):
    how long work the room's load started holds the event loop after the sync."""
    worst = 0.0
    end = time.perf_counter() + window
    while time.perf_counter() < end:
        asked = time.perf_counter()
        await server.api("api", "status")
        worst = max(worst, time.perf_counter() - asked)
        await asyncio.sleep(0.1)
    return worst


async def open_once(
    cells: int, with_loop: bool, timeout: float
) -> tuple[float, float, float, float]:
    """Seconds to a synced document, seconds the loop stays busy after, RSS (MB) before
    and after."""
    home = Path(tempfile.mkdtemp(prefix="loop-bench-big-"))
    if not with_loop:
        (home / "config").mkdir()
        config = {"ServerApp": {"jpserver_extensions": {"jupyter_loop": False}}}
        (home / "config" / "jupyter_server_config.json").write_text(json.dumps(config))
    server = ServerProcess(home)
    server.root.mkdir(parents=True)
    (server.root / PATH).write_text(big_notebook(cells), encoding="utf-8")
    server.start()
    try:
        await server.ready()
        assert server.process is not None
        before = rss_mb(server.process.pid)
        start = time.perf_counter()
        channel, document = await server.open_room(PATH)
        async with Provider(document.ydoc, channel):
            deadline = start + timeout
            while len(document.ycells) < cells:
                if time.perf_counter() > deadline:
                    return float("inf"), 0.0, before, rss_mb(server.process.pid)
                await asyncio.sleep(0.05)
            elapsed = time.perf_counter() - start
            busy = await busy_after(server)
            after = rss_mb(server.process.pid)
        return elapsed, busy, before, after
    finally:
        server.kill()


async def main(sizes: list[int], timeout: float, only: str | None) -> None:
    print("Shared machine: figures are noisy (tens of per cent).", flush=True)
    previous: dict[bool, tuple[int, float]] = {}
    for cells in sizes:
        for with_loop in (True, False):
            label = "jupyter-loop" if with_loop else "stock"
            if only not in (None, label):
                continue
            elapsed, busy, before, after = await open_once(cells, with_loop, timeout)
            ratio = ""
            if with_loop in previous and elapsed != float("inf"):
                n0, t0 = previous[with_loop]
                ratio = f"  ×{elapsed / t0:.1f} for ×{cells / n0:.1f} cells"
            previous[with_loop] = (cells, elapsed)
            shown = f">{timeout:.0f}" if elapsed == float("inf") else f"{elapsed:6.2f}"
            print(
                f"N={cells:6d} {label:12} open {shown} s, then {busy:5.2f} s busy   "
                f"rss {before:5.0f} → "
                f"{after:5.0f} MB{ratio}",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[2000, 5000, 10000])
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--only", choices=["jupyter-loop", "stock"])
    options = parser.parse_args()
    asyncio.run(main(options.sizes, options.timeout, options.only))
