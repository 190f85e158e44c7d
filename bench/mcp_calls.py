"""What the MCP endpoint costs: tool-call round trips through the SDK client, on a real server.

Starts ``jupyter server`` with jupyter-loop (``approval_policy=always``, so no person is
asked), opens one MCP session with the SDK's Streamable HTTP client and times, per call:
``read_cell`` on a small notebook, ``read_notebook``, and ``run_cells`` of ``1 + 1`` (the
run waits for the cell's end), next to the same run through the REST endpoint and waiting
for the saved run marker over a Y client; then ``run_cells`` as an MCP task (2026 protocol):
its creation, the first ``tasks/get`` poll, and creation to completion. Prints medians and
90th percentiles. Run by hand:

    python bench/mcp_calls.py
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx2
import mcp_types as types
import nbformat
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pycrdt import Map, Provider

from jupyter_loop.testing.server_process import TOKEN, ServerProcess
from jupyter_loop.testing.task_client import CLAIMS, TASKS, CreatedTask, task_method

CALLS = 40


def notebook() -> str:
    nb = nbformat.v4.new_notebook()
    for index, source in enumerate(["1 + 1", "print('x' * 100)", "import math"]):
        cell = nbformat.v4.new_code_cell(source)
        cell["id"] = f"c{index}"
        nb.cells.append(cell)
    return nbformat.writes(nb)


def show(name: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[int(len(ms) * 0.9) - 1]
    print(f"{name:<34} median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms   n={len(ms)}")


async def timed(call: object, times: int) -> list[float]:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        await call()  # type: ignore[operator]
        spent.append(time.perf_counter() - start)
    return spent


async def time_tasks(session: ClientSession) -> None:
    """``run_cells`` as an MCP task (2026 protocol, the extension declared): the call that
    makes it, the first ``tasks/get`` poll, and polls every 10 ms until it ends."""
    created: list[float] = []
    first_poll: list[float] = []
    to_end: list[float] = []
    for _ in range(CALLS):
        start = time.perf_counter()
        task = await session.call_tool(
            "run_cells", {"path": "bench.ipynb", "cell_ids": ["c0"]}, allow_claimed=True
        )
        made = time.perf_counter()
        assert isinstance(task, CreatedTask), task
        state = await task_method(session, "tasks/get", task.task_id)
        first_poll.append(time.perf_counter() - made)
        while state.status == "working":
            await asyncio.sleep(0.01)
            state = await task_method(session, "tasks/get", task.task_id)
        assert state.status == "completed", state
        created.append(made - start)
        to_end.append(time.perf_counter() - start)
    show("MCP task: create (run_cells)", created)
    show("MCP task: first tasks/get poll", first_poll)
    show("MCP task: create to completed", to_end)


async def main() -> None:
    server = ServerProcess(Path(tempfile.mkdtemp()), "--JupyterLoopApp.approval_policy=always")
    server.start()
    try:
        await server.ready()
        (server.root / "bench.ipynb").write_text(notebook(), encoding="utf-8")
        kernel_id = await server.start_kernel("bench.ipynb")
        url = server.url("api", "jupyter-loop", "mcp")
        headers = {"Authorization": f"token {TOKEN}"}
        me = types.Implementation(name="bench", version="1")
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write, client_info=me) as session,
        ):
            await session.initialize()

            async def tool(name: str, **arguments: object) -> None:
                result = await session.call_tool(name, {"path": "bench.ipynb", **arguments})
                assert not result.is_error, result

            await tool("run_cells", cell_ids=["c0"])  # warm: kernel, room, queue
            show("MCP read_cell", await timed(lambda: tool("read_cell", cell_id="c1"), CALLS))
            show("MCP read_notebook", await timed(lambda: tool("read_notebook"), CALLS))
            show(
                "MCP run_cells 1 + 1 (to its end)",
                await timed(lambda: tool("run_cells", cell_ids=["c0"]), CALLS),
            )
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(
                read, write, client_info=me, extensions={TASKS: {}}, result_claims=CLAIMS
            ) as tasks,
        ):
            await tasks.discover()
            await time_tasks(tasks)
        channel, nb = await server.open_room("bench.ipynb")
        async with Provider(nb.ydoc, channel):
            board = nb.ydoc.get("jupyter_loop:execution", type=Map)
            await asyncio.sleep(1)
            rest = [await server.timed_run("bench.ipynb", kernel_id, board) for _ in range(CALLS)]
        show("REST run 1 + 1 (to its marker)", rest)
    finally:
        server.kill()


if __name__ == "__main__":
    asyncio.run(main())
