"""A 200,000-line print loop through jupyter-loop against raw jupyter_client.

Starts a real ``jupyter server`` (127.0.0.1) with jupyter-loop (default output budget),
opens a notebook session and runs ``for i in range(200_000): print(i)`` on the same
kernel, interleaved:

* raw: an ``AsyncKernelClient`` on the kernel's connection file collects every stream
  message until the reply and the idle status have arrived;
* jupyter-loop: from the REST request until a Y client joined to the room sees the run
  marked done (what a browser tab waits for).

Then it reports the server's peak RSS while the loop ran, the bytes of the shared
document (as a Y update, and the cell's outputs as JSON), of the saved ``.ipynb``, and
how much the YStore grew per run.

Usage: ``python bench/print_loop.py [runs] [lines] [store_runs] [budget]`` (defaults 3,
200000, 200: the runs after which the YStore size is printed, and the server's default
output budget; a ``budget`` of 0 keeps everything in the notebook).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import psutil
from jupyter_client.asynchronous import AsyncKernelClient
from pycrdt import Map, Provider

from jupyter_loop.testing.server_process import ServerProcess

PATH = "loop.ipynb"


async def raw_run(client: AsyncKernelClient, code: str) -> tuple[float, int]:
    start = time.perf_counter()
    msg_id = client.execute(code)
    replied = idle = False
    received = 0
    while not (replied and idle):
        if not replied:
            try:
                reply = await client.get_shell_msg(timeout=0.01)
                replied = reply["parent_header"].get("msg_id") == msg_id
            except Exception:  # queue.Empty: the reply is not there yet
                pass
        while not idle:
            try:
                message = await client.get_iopub_msg(timeout=0.01)
            except Exception:
                break
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "stream":
                received += len(message["content"]["text"])
            idle = (
                message["msg_type"] == "status" and message["content"]["execution_state"] == "idle"
            )
    return time.perf_counter() - start, received


class PeakRss:
    """Samples a process's resident memory every 20 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self._process = psutil.Process(pid)
        self.peak = self.baseline = self._process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._process.memory_info().rss)
            time.sleep(0.02)


def ystore_bytes(home: Path) -> int:
    with sqlite3.connect(f"file:{home / 'ystore.db'}?mode=ro", uri=True) as db:
        updates = db.execute("SELECT coalesce(sum(length(yupdate)), 0) FROM yupdates").fetchone()
        try:
            checkpoints = db.execute(
                "SELECT coalesce(sum(length(checkpoint)), 0) FROM ycheckpoints"
            ).fetchone()
        except sqlite3.OperationalError:
            checkpoints = (0,)
    return int(updates[0]) + int(checkpoints[0])


def saved_count(path: Path) -> int | None:
    """The first cell's execution count in the saved notebook (None mid-write)."""
    try:
        return (
            nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
            .cells[0]
            .get("execution_count")
        )
    except (ValueError, OSError):
        return None


def kb(size: float) -> str:
    return f"{size / 1024:,.0f} KB"


async def main(
    runs: int = 3, lines: int = 200_000, store_runs: int = 200, budget: int | None = None
) -> None:
    code = f"for i in range({lines}):\n    print(i)"
    home = Path(tempfile.mkdtemp(prefix="loop-bench-"))
    options = [] if budget is None else [f"--JupyterLoopApp.output_budget_bytes={budget}"]
    server = ServerProcess(home, *options)
    server.root.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(code, id="c0"))
    (server.root / PATH).write_text(nbformat.writes(notebook))
    server.start()
    assert server.process is not None
    try:
        await server.ready()
        kernel_id = await server.start_kernel(PATH)
        client = await server.kernel_client(kernel_id)
        channel, document = await server.open_room(PATH)
        raw: list[float] = []
        loop: list[float] = []
        on_disk: list[float] = []
        growth: list[int] = []
        peaks: list[int] = []
        async with Provider(document.ydoc, channel):
            board = document.ydoc.get("jupyter_loop:execution", type=Map)
            _, expected = await raw_run(client, code)  # warm up both paths
            await server.timed_run(PATH, kernel_id, board, timeout=300)
            for _ in range(runs):
                elapsed, received = await raw_run(client, code)
                assert received == expected, (received, expected)
                raw.append(elapsed)
                await asyncio.sleep(1.5)  # let the last saves land
                before = ystore_bytes(home)
                with PeakRss(server.process.pid) as rss:
                    start = time.perf_counter()
                    loop.append(await server.timed_run(PATH, kernel_id, board, timeout=300))
                    count = document.ycells[0].get("execution_count")
                    while saved_count(server.root / PATH) != count:
                        await asyncio.sleep(0.01)
                    on_disk.append(time.perf_counter() - start)
                await asyncio.sleep(1.5)
                growth.append(ystore_bytes(home) - before)
                peaks.append(rss.peak - rss.baseline)
                peak_total = rss.peak
            # A long-lived notebook: many more runs, then what the YStore holds.
            for _ in range(store_runs):
                await server.timed_run(PATH, kernel_id, board, timeout=300)
            await asyncio.sleep(1.5)
            store_total = ystore_bytes(home)
            store_file = (home / "ystore.db").stat().st_size
        # What a tab opened now downloads: the server's document, tombstones collected.
        # (A replica that watched the runs keeps what it saw deleted: pycrdt does not
        # collect remotely deleted content as Yjs in a browser does.)
        channel, fresh = await server.open_room(PATH)
        async with Provider(fresh.ydoc, channel):
            while not len(fresh.ycells) or "outputs" not in fresh.ycells[0]:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            state = len(fresh.ydoc.get_update())
            outputs = json.dumps(fresh.ycells[0]["outputs"].to_py())
        client.stop_channels()
        saved = (server.root / PATH).stat().st_size
        outputs_dir = home / "data" / "jupyter_loop" / "outputs"
        store = sum(f.stat().st_size for f in outputs_dir.rglob("*") if f.is_file())
    finally:
        server.kill()
    raw_s, loop_s = statistics.median(raw), statistics.median(loop)
    kept = "the default output budget" if budget is None else f"output budget {budget}"
    print(f"{lines:,}-line print loop, {runs} runs each way, interleaved, same kernel ({kept})")
    print(f"raw jupyter_client:   median {raw_s:.2f} s ({kb(expected)} of stream text)")
    print(f"jupyter-loop:         median {loop_s:.2f} s (REST request -> done seen by a Y client)")
    print(f"ratio:                {loop_s / raw_s:.2f}x (goal <= 1.2x)")
    disk_s = statistics.median(on_disk)
    print(f"in the saved .ipynb:  median {disk_s:.2f} s ({disk_s / raw_s:.2f}x raw)")
    print(f"server RSS:           peak {kb(peak_total)}, at most +{kb(max(peaks))} during a run")
    print(f"shared document:      {kb(state)} (a new tab's sync)")
    print(f"the cell's outputs:   {kb(len(outputs))} as JSON")
    print(f"saved .ipynb:         {kb(saved)}")
    print(f"YStore growth:        median {kb(statistics.median(growth))} per run")
    print(
        f"YStore after {runs + store_runs + 1} runs: {kb(store_file)} on disk, {kb(store_total)} "
        "of updates and checkpoints (goal < 5 MB after 200)"
    )
    print(f"full outputs on disk: {kb(store)} (jupyter-loop's data dir, last run of the cell)")


if __name__ == "__main__":
    args = [int(arg) for arg in sys.argv[1:5]]
    asyncio.run(main(*args))
