"""Two clients that start a notebook's kernel at the same moment get one kernel.

jupyter_server's ``POST /api/sessions`` looks for a session of the path, then starts a
kernel (tens of milliseconds later it records the session): two requests in that window
each started a kernel. jupyter-loop runs a notebook's cells on its session's kernel, so
``jupyter loop run`` and a tab (or a script) opening the notebook together ran cells on
two kernels, and the two runs of a cell printed into it interleaved (chaos seed 2029,
trial 110).
"""

from __future__ import annotations

import asyncio
from typing import Any


async def test_sessions_asked_for_at_once_share_one_kernel(api: Any, write_notebook: Any) -> None:
    path = write_notebook("both.ipynb", "1")
    body = {"path": path, "type": "notebook", "name": "", "kernel": {"name": "python3"}}
    made = await asyncio.gather(
        *(api("api", "sessions", method="POST", body=body) for _ in range(3))
    )
    assert len({m["kernel"]["id"] for m in made}) == 1, made
    sessions = [s for s in await api("api", "sessions") if s["path"] == path]
    assert len(sessions) == 1
    kernels = await api("api", "kernels")
    assert len(kernels) == 1


async def test_other_kinds_of_session_are_as_before(api: Any, write_notebook: Any) -> None:
    path = write_notebook("console.ipynb", "1")
    body = {"path": path, "type": "console", "name": "", "kernel": {"name": "python3"}}
    made = await asyncio.gather(
        *(api("api", "sessions", method="POST", body=body) for _ in range(2))
    )
    assert all(m["type"] == "console" for m in made)
