"""What a tab reads after restarts: the store and a joining tab's sync, applied with Yjs.

pycrdt integrates items Yjs holds back (an item whose client's earlier structs are
missing), so every check here reads the same updates with Yjs, the browser's library,
and compares what it shows with what the server's pycrdt shows.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import notebook_json, wait_for
from pycrdt import Doc, Provider

from jupyter_loop.testing.server_process import ServerProcess
from jupyter_loop.testing.yjs import disagreements, read_with_yjs

PATH = "nb.ipynb"
CELL = "import time\nfor i in range(5):\n    print('line', i, flush=True)\n    time.sleep(0.05)"
STORES = {
    "compact": (),
    "jupyter-collaboration's": (
        "--YDocExtension.ystore_class=jupyter_server_ydoc.stores.SQLiteYStore",
    ),
}


@pytest.fixture(params=list(STORES))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path, *STORES[request.param])
    yield process
    process.kill()


def stored_rows(server: ServerProcess) -> dict[str, list[bytes]]:
    """Every stored update, by document. jupyter-collaboration's own store writes the rooms
    it opens on the server's behalf to its default file, in the server's working directory."""
    rows: dict[str, list[bytes]] = defaultdict(list)
    for store in (server.ystore, server.home / ".jupyter_ystore.db"):
        if not store.exists():
            continue
        with sqlite3.connect(store) as db:
            if not db.execute("SELECT name FROM sqlite_master WHERE name='yupdates'").fetchall():
                continue
            query = "SELECT path, yupdate FROM yupdates ORDER BY timestamp"
            for path, update in db.execute(query):
                rows[path].append(bytes(update))
    return rows


async def run_with_no_tab(server: ServerProcess) -> None:
    """A run asked for as ``jupyter loop run`` asks, with no tab open, to its saved end
    (a new kernel after each restart: its count is 1 again)."""
    before = (server.root / PATH).stat().st_mtime_ns
    kernel_id = await server.start_kernel(PATH)
    body = {"path": PATH, "cell_ids": ["c0"], "kernel_id": kernel_id}
    await server.api("api", "jupyter-loop", "runs", method="POST", body=body)
    deadline = time.monotonic() + 60
    while True:
        saved = server.saved(PATH)  # None while a save is under way
        changed = (server.root / PATH).stat().st_mtime_ns != before
        if changed and saved is not None and saved.cells[0].execution_count == 1:
            break
        assert time.monotonic() < deadline, "the run did not end"
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.5)  # the store is written a moment after the document


async def restart(server: ServerProcess) -> None:
    server.stop(signal.SIGTERM)
    server.start()
    await server.ready()


async def test_a_notebook_run_with_no_tab_across_restarts_reads_whole_in_yjs(
    server: ServerProcess,
):
    """The evidence's sequence (restart-blank): runs with no tab open, each followed by a
    restart; then the stored rows and what a joining tab is sent must show, in Yjs, the
    count and outputs the server shows."""
    server.root.mkdir(parents=True)
    (server.root / PATH).write_text(notebook_json(CELL), encoding="utf-8")
    server.start()
    await server.ready()
    for _ in range(2):
        await run_with_no_tab(server)
        await restart(server)

    rows = stored_rows(server)
    assert rows, "nothing was stored"
    views = read_with_yjs(rows)
    for room, updates in rows.items():
        loaded = Doc()
        for update in updates:
            loaded.apply_update(update)
        assert disagreements(loaded, views[room]) == [], room

    channel, notebook = await server.open_room(PATH)
    async with Provider(notebook.ydoc, channel):
        await wait_for(lambda: notebook.cell_number == 1 and notebook.ycells[0].get("outputs"))
        sent = notebook.ydoc.get_update()  # all a tab that joins now is sent
        (tab,) = read_with_yjs({"tab": [sent]}).values()
        assert disagreements(notebook.ydoc, tab) == []
        (cell,) = tab.cells
        assert cell["execution_count"] == 1
        assert cell["outputs"][0]["text"] == "".join(f"line {i}\n" for i in range(5))
