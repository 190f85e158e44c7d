"""A tab's run request may overtake its last keystrokes: the server waits for them.

In stock Jupyter the code goes with the execute request. Here a tab's keystrokes reach the
server through the notebook's room (its websocket, then the room's queue of messages) and
its run request through another socket, so Shift-Enter right after typing can be handled
before the room has applied the last keystrokes, and the kernel would run the code before
them. A tab therefore says which source it shows for each cell it asks to run
(``RunRequest.sources``); the server waits, at most :data:`SOURCES_WAIT` seconds, until
its notebook holds them (the cell itself, too: a cell added just before), then runs what
the notebook holds.

Rejected: running the source the tab sent. The notebook is the record of what ran (the
run history, the stale marks, every other tab's view); a source no notebook shows would
run under a cell that says otherwise. Rejected too: refusing a request whose source does
not match (the API's ``source_hashes``, for approvals): another tab's edit made meanwhile
is not an error, and the notebook's source is what runs, as after any merge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from jupyter_ydoc import YNotebook

from ..document import find_cells

SOURCES_WAIT = 2.0
"""Seconds a run request waits for the tab's keystrokes to reach the notebook."""

_POLL = 0.01


async def with_shown_sources(
    read: Callable[[], Awaitable[YNotebook]],
    shown: dict[str, str] | None,
    timeout: float = SOURCES_WAIT,
) -> YNotebook:
    """The notebook (``read``), once it holds the ``shown`` sources or ``timeout`` passed.

    ``read`` is awaited last: a caller that reads the cells right after reads them as the
    notebook holds them then.
    """
    notebook = await read()
    if not shown:
        return notebook
    deadline = asyncio.get_running_loop().time() + timeout
    while not holds(notebook, shown) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(_POLL)
        notebook = await read()
    return notebook


def holds(notebook: YNotebook, shown: dict[str, str]) -> bool:
    """Whether every cell of ``shown`` is in the notebook with that source."""
    located = find_cells(notebook, list(shown))
    return all(
        cell_id in located and str(located[cell_id][1].get("source", "")) == source
        for cell_id, source in shown.items()
    )
