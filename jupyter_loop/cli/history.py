"""``jupyter loop history NOTEBOOK [CELL]``: the runs a notebook's cells had, newest first.

One line per run: when it ended, how, how long it took, who started it through what, the
kernel and the first line of the source it ran (masked on the server, as outputs are).
"""

from __future__ import annotations

import time
from typing import Any, TextIO
from urllib.parse import urlencode

from .connection import Api
from .render import DIM, GREEN, RED, Style, visible
from .run import pick_cells


async def history_command(api: Api, path: str, cell: str | None, limit: int, out: TextIO) -> int:
    """Print the runs of the notebook (or of one cell, by id or number from 1)."""
    query: dict[str, str] = {"path": path, "limit": str(limit)}
    if cell is not None:
        if cell.isdigit():
            async with api.room(path) as notebook:
                cell = pick_cells(notebook, (cell,))[0]
        query["cell_id"] = cell
    reply = await api.call("api", "jupyter-loop", "history", query=urlencode(query))
    style = Style(tty=out.isatty())
    runs = reply["runs"]
    if not runs:
        out.write("No runs recorded.\n")
    for run in runs:
        out.write(history_line(run, style) + "\n")
    return 0


def history_line(run: dict[str, Any], style: Style) -> str:
    """``2026-11-27 05:40:01  ok  0.01 s  cell c1  by a tab of ada  kernel 1a2b3c4d  x = 1``.

    Example:
        >>> run = {"ended": 1.5, "started": 1.0, "status": "ok", "cell_id": "c1",
        ...        "by": "a tab of ada", "kernel_id": "1a2b3c4d5e", "source": "x = 1\\ny"}
        >>> history_line(run, Style(tty=False))[19:]
        '  ok  0.50 s  cell c1  by a tab of ada  kernel 1a2b3c4d  x = 1 (+1 lines)'
    """
    ended = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(run["ended"])))
    status = visible(str(run["status"]))
    took = (
        f"{float(run['ended']) - float(run['started']):.2f} s"
        if run["started"] is not None
        else "never ran"
    )
    lines = str(run.get("source") or "").splitlines() or [""]
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    colour = GREEN if status == "ok" else RED
    over = ", taken over after a server restart" if run.get("taken_over") else ""
    return (
        f"{ended}  {style.paint(status, colour)}  {took}  cell {visible(str(run['cell_id']))}  "
        f"by {visible(str(run['by']))}{over}  "
        + style.paint(f"kernel {visible(str(run['kernel_id']))[:8]}", DIM)
        + f"  {visible(lines[0])}{more}"
    )
