"""What the tests of runs that outlive their server share: a server process per test
(the ``loop_serve`` fixture of ``loop_fixtures.py``), a notebook with a long loop, its
runs, and what its saved file and a tab show."""

from __future__ import annotations

from typing import Any

from loop_helpers import notebook_json, wait_for
from pycrdt import Provider

from jupyter_loop.testing.server_process import ServerProcess

LINES = 600  # 30 s: the run goes on after the server is back (it starts in ~10 s)
LOOP = f"import time\nfor i in range({LINES}):\n    print(i, flush=True)\n    time.sleep(0.05)"
PATH = "kept.ipynb"


def printed(outputs: Any) -> list[int]:
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("name") == "stdout")
    return [int(line) for line in text.split()]


async def started(server: ServerProcess, *sources: str) -> str:
    server.root.mkdir(parents=True, exist_ok=True)
    (server.root / PATH).write_text(notebook_json(*sources), encoding="utf-8")
    server.start()
    await server.ready()
    return await server.start_kernel(PATH)


async def run(server: ServerProcess, *cell_ids: str) -> None:
    body = {"path": PATH, "cell_ids": list(cell_ids)}
    await server.api("api", "jupyter-loop", "runs", method="POST", body=body)


async def ended_in_file(server: ServerProcess, index: int, timeout: float = 60) -> Any:
    """The saved notebook once cell ``index`` has its count (its run ended)."""
    return await wait_for(
        lambda: (nb := server.saved(PATH)) and nb.cells[index].execution_count and nb,
        timeout=timeout,
    )


async def lines_seen(server: ServerProcess, at_least: int) -> None:
    channel, live = await server.open_room(PATH)
    async with Provider(live.ydoc, channel):
        await wait_for(lambda: live.cell_number > 1)
        await wait_for(lambda: len(printed(live.get_cell(1)["outputs"])) >= at_least, timeout=60)
