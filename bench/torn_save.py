"""How often a server killed at a random moment leaves an unreadable notebook on disk.

The scenario of ``shared/evidence/torn-save``: a notebook of 201 cells (about 4 MB, mostly
stored outputs) whose first cell prints a line every 20 ms, run on a real ``jupyter
server`` (127.0.0.1) with no tab open and ``save_interval = 0.5``, so the server saves it
about twice a second. At a random moment 0.3-6 s after the run request the server's whole
process group is SIGKILLed (a killed pod, an OOM kill); the file is then read as the next
tool would read it (``nbformat.read`` + ``validate``), before any server touches it, and
the server is started again for the next round.

Reported: rounds, rounds that left an unreadable file, and what such a file held.
jupyter-loop's saves (``jupyter_loop/saves.py``) should leave none; to measure
jupyter_server's own in-place saves, run this script with ``PYTHONPATH`` pointing at a
checkout without that layer.

Usage: ``python bench/torn_save.py [rounds] [--seed N]`` (default 15 rounds, seed 1).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

import nbformat

from jupyter_loop.testing.server_process import ServerProcess

PATH = "big.ipynb"
CELL = "import time\nfor i in range(100_000):\n    print(i, flush=True)\n    time.sleep(0.02)"
STORED_LINE = "y" * 200 + "\n"


def big_notebook(cells: int = 201, lines_per_cell: int = 100) -> nbformat.NotebookNode:
    """A first cell that prints, then ``cells - 1`` cells with about 20 KB of outputs."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(CELL, id="c0"))
    for index in range(1, cells):
        cell = nbformat.v4.new_code_cell(f"print({index})", id=f"c{index}")
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=STORED_LINE * lines_per_cell)
        ]
        notebook.cells.append(cell)
    return notebook


def unreadable(path: Path) -> str | None:
    """Why the file cannot be read as a notebook, or None if it reads and validates."""
    try:
        nbformat.validate(nbformat.read(path, as_version=4))
    except Exception as e:  # what the next tool would choke on, whatever it is
        return f"{type(e).__name__}: {str(e)[:80]}"
    return None


async def one_round(server: ServerProcess, kill_after: float) -> str | None:
    server.start()
    await server.ready()
    await server.start_kernel(PATH)
    await server.api(
        "api", "jupyter-loop", "runs", method="POST", body={"path": PATH, "cell_ids": ["c0"]}
    )
    await asyncio.sleep(kill_after)
    server.kill()
    return unreadable(server.root / PATH)


async def main(rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="torn-save-") as home:
        server = ServerProcess(Path(home), "--JupyterLoopApp.save_interval=0.5")
        server.root.mkdir(parents=True)
        nbformat.write(big_notebook(), server.root / PATH)
        size = (server.root / PATH).stat().st_size
        print(f"notebook: {size / 1e6:.1f} MB, seed {seed}")
        torn = 0
        started = time.monotonic()
        for number in range(1, rounds + 1):
            kill_after = rng.uniform(0.3, 6.0)
            why = await one_round(server, kill_after)
            if why is not None:
                torn += 1
                left = sorted(p.name for p in server.root.iterdir() if p.name != PATH)
                size = (server.root / PATH).stat().st_size if (server.root / PATH).exists() else 0
                print(f"round {number}: kill at {kill_after:.1f} s: UNREADABLE: {why}; "
                      f"size {size}, beside it {left}")  # fmt: skip
            else:
                print(f"round {number}: kill at {kill_after:.1f} s: whole")
        minutes = (time.monotonic() - started) / 60
        print(f"rounds: {rounds}, unreadable files: {torn} ({minutes:.1f} min)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.seed))
