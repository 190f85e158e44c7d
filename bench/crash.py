"""How many lines of a running cell survive a killed server.

A real ``jupyter server`` (127.0.0.1) with jupyter-loop and its default saving (every
5 s while a cell prints, jupyter-collaboration's 1 s autosave); a cell prints a
numbered, time-stamped line 20 times a second with no client connected (the tab was
closed); the server and its kernel are SIGKILLed 15 s into the run (a killed pod, an OOM
kill, a power cut) and restarted on the same directories. Reported: the lines printed
before the kill (from their time stamps), the lines in the saved ``.ipynb`` and in the
reopened shared document, with the output journal and without it
(``journal_interval=0``), in the same run.

Usage: ``python bench/crash.py [seconds_before_kill]`` (default 15).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from pycrdt import Provider

from jupyter_loop.testing.server_process import ServerProcess

PATH = "chatty.ipynb"
CELL = """import time
for i in range(100_000):
    print(i, time.time(), flush=True)
    time.sleep(0.05)"""
DEFAULT_SAVING = ("--JupyterLoopApp.save_interval=5", "--YDocExtension.document_save_delay=1")


def stamps(outputs: Any) -> list[float]:
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("name") == "stdout")
    return [float(line.split()[1]) for line in text.splitlines() if len(line.split()) == 2]


async def until(predicate: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(predicate)
        await asyncio.sleep(0.1)
    return value


async def scenario(home: Path, seconds: float, *options: str) -> tuple[float, int, int, float]:
    server = ServerProcess(home, *DEFAULT_SAVING, *options)
    server.root.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(CELL, id="c0"))
    (server.root / PATH).write_text(nbformat.writes(notebook), encoding="utf-8")
    try:
        server.start()
        await server.ready()
        await server.start_kernel(PATH)
        body = {"path": PATH, "cell_ids": ["c0"]}
        await server.api("api", "jupyter-loop", "runs", method="POST", body=body)
        await asyncio.sleep(seconds)
        killed_at = time.time()
        server.kill()
        server.start()
        await server.ready()
        saved = await until(
            lambda: (nb := server.saved(PATH)) and "restart" in str(nb.cells[0].outputs) and nb
        )
        channel, live = await server.open_room(PATH)
        async with Provider(live.ydoc, channel):
            await until(lambda: live.cell_number == 1)
            await asyncio.sleep(1)
            in_document = len(stamps(live.get_cell(0)["outputs"]))
        in_file = stamps(saved.cells[0].outputs)
        if len(in_file) < 2:
            return 0.0, len(in_file), in_document, float(seconds)
        # Lines printed before the kill, at the pace the kept lines show.
        pace = (in_file[-1] - in_file[0]) / (len(in_file) - 1)
        lost = killed_at - in_file[-1]
        return len(in_file) + lost / pace, len(in_file), in_document, lost
    finally:
        server.kill()


async def main(seconds: float) -> None:
    modes = (
        ("with the journal", ()),
        ("without (journal_interval=0)", ("--JupyterLoopApp.journal_interval=0",)),
    )
    for label, options in modes:
        with tempfile.TemporaryDirectory() as home:
            printed, in_file, in_document, lost = await scenario(Path(home), seconds, *options)
        print(
            f"{label:30} printed before the kill ~{printed:4.0f}  in the .ipynb {in_file:4d}  "
            f"in the reopened notebook {in_document:4d}  last {lost:.2f} s lost"
        )


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 15.0))
