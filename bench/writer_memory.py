"""Python memory the output writer holds during a run, once it has written a long output.

A real ``CellWriter`` writes a print loop into an in-memory ``YNotebook`` in batches, as a
run does, up to its end; ``tracemalloc`` counts the Python memory allocated since the run
started and still held (the document's own memory lives in pycrdt, outside it). With no
budget the document holds all of the output: a writer keeping a copy of it holds as much
again.

Usage: ``python bench/writer_memory.py [lines]`` (default 1000000).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

from jupyter_ydoc import YNotebook

from jupyter_loop.execution.full_outputs.store import FileOutputStore
from jupyter_loop.execution.outputs.budget import OutputBudget
from jupyter_loop.execution.outputs.ops import AppendStream
from jupyter_loop.execution.outputs.writer import CellWriter, OutputPolicy
from jupyter_loop.testing.one_notebook import OneNotebook

BATCH = 2_000  # lines a batch: what a fast loop prints in one batch interval


async def held(policy: OutputPolicy, lines: int) -> int:
    """Bytes of Python memory held once ``lines`` lines were written, before the run ends."""
    notebook = YNotebook()
    notebook.append_cell({"cell_type": "code", "id": "c", "source": "", "outputs": []})
    docs: Any = OneNotebook(notebook)  # all of LiveDocuments a writer uses
    log = logging.getLogger("bench")
    writer = CellWriter(docs, "json:notebook:file", "c", interval=10.0, log=log, policy=policy)
    writer.reset("run")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, lines, BATCH):
            text = "".join(f"{i}\n" for i in range(start, min(start + BATCH, lines)))
            writer.push(AppendStream("stdout", text))
            await writer.flush()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


async def main(lines: int = 1_000_000) -> None:
    budget = OutputBudget.from_total(256 * 1024)
    store = FileOutputStore(Path(tempfile.mkdtemp(prefix="loop-bench-")))
    policies = {
        "no budget (the notebook keeps all)": OutputPolicy(),
        "default budget, full output kept": OutputPolicy(budget=budget, store=store),
        "default budget, no store": OutputPolicy(budget=budget),
    }
    print(f"{lines:,}-line print loop, written in batches of {BATCH:,} lines")
    for name, policy in policies.items():
        print(f"{name:36s} {await held(policy, lines) / 1024:8,.0f} KB held by the writer")


if __name__ == "__main__":
    asyncio.run(main(*[int(arg) for arg in sys.argv[1:2]]))
