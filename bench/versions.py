"""What keeping a version costs a save, and what it costs the event loop.

jupyter_server's own contents manager with jupyter-loop's saves
(``ReplacingAsyncLargeFileManager``), on a real directory, saves one notebook again and
again, each save with a changed source (so each adds a version), interleaved with and
without a :class:`~jupyter_loop.history.versions.keeper.VersionKeeper` on its save hooks:

* the save's own time (what a tab's Save or the room's autosave waits for): medians with
  versions and without, and their ratio;
* the worker's time per save (hashing, compressing, SQLite; on its own thread), from the
  save's end until the version is kept;
* the event loop's longest pause meanwhile (a ticker on the loop every millisecond): what
  the worker's share of the interpreter costs other requests.

Notebooks: a small one (20 cells, ~10 KB) and a large one (200 cells of printed lines and
PNGs, ~9 MB). Usage: ``python bench/versions.py [saves]`` (default 30 each way).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat

from jupyter_loop.document import LiveDocuments
from jupyter_loop.history.versions import VersionStore
from jupyter_loop.history.versions.keeper import VersionKeeper
from jupyter_loop.saves import ReplacingAsyncLargeFileManager


def notebook(cells: int, heavy: bool) -> dict[str, Any]:
    nb = nbformat.v4.new_notebook()
    for i in range(cells):
        cell = nbformat.v4.new_code_cell(f"x = {i}\nprint(x)", id=f"c{i}")
        if heavy:
            lines = "".join(f"line {j}\n" for j in range(200))
            png = base64.b64encode(os.urandom(30_000)).decode()
            cell.outputs = [
                nbformat.v4.new_output("stream", name="stdout", text=lines),
                nbformat.v4.new_output("display_data", data={"image/png": png}),
            ]
        nb.cells.append(cell)
    return dict(nb)


async def stall_while(work: Any) -> tuple[Any, float]:
    """Run ``work`` while a ticker on the loop measures the longest gap between ticks (ms)."""
    worst = 0.0
    running = True

    async def tick() -> None:
        nonlocal worst
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst = max(worst, now - last - 0.001)
            last = now

    ticker = asyncio.create_task(tick())
    try:
        result = await work
    finally:
        running = False
        await ticker
    return result, worst * 1000


async def measure(content: dict[str, Any], saves: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="loop-bench-versions-"))
    plain = ReplacingAsyncLargeFileManager(root_dir=str(root))
    kept = ReplacingAsyncLargeFileManager(root_dir=str(root))
    log = logging.getLogger("bench")
    keeper = VersionKeeper(
        VersionStore(root / "data" / "versions.sqlite3", max_per_notebook=saves * 2),
        LiveDocuments({}, log),
        kept,
        log,
    )
    keeper.start()
    times: dict[str, list[float]] = {"off": [], "on": []}
    worker: list[float] = []
    stalls: list[float] = []
    for n in range(saves):
        for label, manager in (("off", plain), ("on", kept)):
            content["cells"][0]["source"] = f"x = {n}  # {label}"
            model = {"type": "notebook", "format": "json", "content": content}
            started = time.perf_counter()
            await manager.save(model, f"{label}.ipynb")
            times[label].append((time.perf_counter() - started) * 1000)
            if label == "on":
                started = time.perf_counter()
                _, stall = await stall_while(keeper.settle())
                worker.append((time.perf_counter() - started) * 1000)
                stalls.append(stall)
    size = (root / "on.ipynb").stat().st_size
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    print(f"notebook {size / 1e3:.0f} KB, {saves} saves each way")
    print(f"  save: {off:.2f} ms without versions, {on:.2f} ms with (ratio {on / off:.2f})")
    print(
        f"  then the worker keeps it in {statistics.median(worker):.1f} ms (median), the "
        f"event loop's longest pause meanwhile {statistics.median(stalls):.1f} ms (median)"
    )
    print(f"  versions kept: {len(keeper.store.versions('on.ipynb'))}, "
          f"{keeper.store.bytes_stored() / 1e6:.2f} MB compressed")  # fmt: skip
    await keeper.stop()


async def main(saves: int) -> None:
    await measure(notebook(20, heavy=False), saves)
    await measure(notebook(200, heavy=True), saves)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
