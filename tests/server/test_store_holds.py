"""The store says when it holds a room's document as it is (``CompactSQLiteYStore.holds``,
asked through ``LiveDocuments.stored``): a restarted server lets a run leave its ledger
and its output journal only once the store holds the run's close.

The store learns what it holds from the updates it writes. pycrdt's ``get_state`` of an
update that starts past a client's clock 0 (every update after a room's first) says
nothing of that client, so a store that read its writes that way never held a document
after its first change: each room waited the whole timeout at every restart, and the
runs it closed stayed listed for the next start to close again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from loop_helpers import wait_for

from jupyter_loop.ystore import CompactSQLiteYStore


def loop_app(server: Any) -> Any:
    (app,) = server.extension_manager.extension_apps["jupyter_loop"]
    return app


async def test_the_store_says_it_holds_a_notebook_after_runs(
    jp_serverapp: Any, write_notebook: Any, start_kernel: Any, run_cells: Any, api: Any
) -> None:
    path = write_notebook("held.ipynb", "print('one')")
    await start_kernel(path)
    documents = loop_app(jp_serverapp).documents
    for _ in range(2):  # the second run's updates come after the room's first write
        await run_cells(path, "c0")
        await asyncio.sleep(0.3)  # (past the store's write interval: a batch of its own)

        async def runs_over() -> bool:
            return not (await api("api", "jupyter-loop", "runs", params={"path": path}))["cells"]

        while not await runs_over():
            await asyncio.sleep(0.05)
    room_id = await documents.room_id(path)
    _, room = documents.loaded_room(path)
    assert isinstance(room.ystore, CompactSQLiteYStore)
    await wait_for(lambda: room.ystore.writes_waiting == 0)
    assert await documents.stored(room_id, timeout=3)
