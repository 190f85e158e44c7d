"""A real Jupyter server process, killed and restarted in the middle of a run."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlencode

import pytest
from loop_helpers import notebook_json, wait_for
from pycrdt import Map, Provider

from jupyter_loop.testing.server_process import ServerProcess

LOOP = "import time\nfor i in range(600):\n    print(i, flush=True)\n    time.sleep(0.05)"


def printed(cell: Any) -> list[int]:
    text = "".join("".join(o.get("text", "")) for o in cell.outputs if o.get("name") == "stdout")
    return [int(line) for line in text.split()]


@pytest.mark.timeout(180)
async def test_a_crash_mid_run_keeps_saved_outputs_and_marks_the_cut(server: ServerProcess):
    path = "crash.ipynb"
    server.root.mkdir(parents=True)
    (server.root / path).write_text(notebook_json(LOOP, "print('queued')"), encoding="utf-8")
    server.start()
    await server.ready()
    await server.start_kernel(path)
    await server.api(
        "api", "jupyter-loop", "runs", method="POST", body={"path": path, "cell_ids": ["c0", "c1"]}
    )
    before = await wait_for(
        lambda: (nb := server.saved(path)) and len(printed(nb.cells[0])) >= 20 and nb, timeout=60
    )
    lines_before = printed(before.cells[0])
    server.kill()

    server.start()
    await server.ready()
    after = await wait_for(
        lambda: (nb := server.saved(path)) and "restart" in json.dumps(nb.cells[0].outputs) and nb,
        timeout=60,
    )
    # Everything saved before the crash is still there, in order, then the note.
    assert printed(after.cells[0])[: len(lines_before)] == lines_before
    assert "cut off by a restart" in after.cells[0].outputs[-1]["text"]
    assert after.cells[1].outputs == []

    channel, notebook = await server.open_room(path)
    async with Provider(notebook.ydoc, channel):
        await wait_for(lambda: notebook.cell_number == 2)
        states = [cell.get("execution_state") for cell in notebook.ycells]
        # Idle, or no state at all (a room rebuilt from the file on jupyter_ydoc 3).
        assert all(state in ("idle", None) for state in states), states
        markers = notebook.ydoc.get("jupyter_loop:execution", type=Map)
        await asyncio.sleep(1)  # the room's Y-only state arrives after its cells
        # The run markers say how each run ended; a room rebuilt from the file alone (its
        # YStore behind the file) has none. Either way none says running or queued.
        ended = {cell_id: (markers.get(cell_id) or {}) for cell_id in ("c0", "c1")}
        assert ended["c0"].get("status", "cut_off") == "cut_off", ended
        assert ended["c1"].get("status", "aborted") == "aborted", ended
        assert not [m for m in ended.values() if m.get("state") in ("running", "queued")]

    # The run history has both runs, as they were asked and started, and how the crash
    # ended them (the server closed them: it wrote their records, no one else could).
    query = urlencode({"path": path})
    runs = {
        r["cell_id"]: r
        for r in (await server.api("api", "jupyter-loop", f"history?{query}"))["runs"]
    }
    assert set(runs) == {"c0", "c1"}, runs
    assert (runs["c0"]["status"], runs["c0"]["source"]) == ("cut_off", LOOP)
    assert runs["c0"]["started"] is not None and runs["c0"]["channel"] == "runs_api"
    assert (runs["c1"]["status"], runs["c1"]["source"]) == ("aborted", "print('queued')")
    assert runs["c1"]["started"] is None
    assert not runs["c0"]["taken_over"]
