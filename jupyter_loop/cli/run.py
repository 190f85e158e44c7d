"""``jupyter loop run NOTEBOOK [CELL…]``: run cells on the server and stream their outputs.

The cells run in the server's queue, exactly as from a tab: the client only asks for the
run (``POST /api/jupyter-loop/runs``) and follows the shared document, where the server
writes outputs and run markers for every tab. The cells' outputs go to stdout; which cell
is running and how it ended go to stderr. Ctrl-C interrupts the kernel; a second Ctrl-C
detaches and leaves the run going on the server.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO, TypeVar
from urllib.parse import urlencode

from jupyter_ydoc import YNotebook
from pycrdt import Map

from ..execution.board import BOARD, DONE, QUEUED
from ..records import CellMarker
from .connection import Api, CliError
from .render import BOLD, GREEN, RED, OutputFollower, Style, visible

DETACHED = 130
T = TypeVar("T")


def pick_cells(notebook: YNotebook, cells: tuple[str, ...]) -> list[str]:
    """Cell ids from ids, the first characters of an id, or 1-based numbers; none given:
    every code cell (Run All).

    Example:
        >>> nb = YNotebook()
        >>> for i, kind in enumerate(["markdown", "code", "code"]):
        ...     nb.append_cell({"id": f"c{i}-x", "cell_type": kind, "source": "", "metadata": {}})
        >>> pick_cells(nb, ()), pick_cells(nb, ("3", "c1-x", "c1"))
        (['c1-x', 'c2-x'], ['c2-x', 'c1-x'])
        >>> pick_cells(nb, ("c",))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        jupyter_loop.cli.failures.CliError: 'c' starts 3 cell ids (c0-x, c1-x, c2-x): give ...
    """
    ids = [str(cell["id"]) for cell in notebook.ycells]
    if not cells:
        return [str(c["id"]) for c in notebook.ycells if c.get("cell_type") == "code"]
    numbers = f"1 to {len(ids)}" if ids else "none: the notebook has no cells"
    chosen: list[str] = []
    for cell in cells:
        if cell.isdigit():
            number = int(cell)
            if not 1 <= number <= len(ids):
                raise CliError(
                    f"The notebook has {len(ids)} cells: there is no cell {number} "
                    f"(cell numbers: {numbers})."
                )
            chosen.append(ids[number - 1])
            continue
        if cell in ids:
            chosen.append(cell)
            continue
        # The first characters of an id, as a short commit hash is given to git.
        starting = [i for i in ids if i.startswith(cell)]
        if len(starting) == 1:
            chosen.append(starting[0])
            continue
        if starting:
            shown = ", ".join(visible(i) for i in starting[:5]) + (
                ", …" if len(starting) > 5 else ""
            )
            raise CliError(
                f"'{visible(cell)}' starts {len(starting)} cell ids ({shown}): give more of it, "
                f"or the cell's number, {numbers}."
            )
        raise CliError(
            f"The notebook has no cell '{visible(cell)}': give a cell's id (or its first "
            f"characters) or its number, {numbers}."
        )
    return list(dict.fromkeys(chosen))


async def notebook_kernel(api: Api, path: str, notebook: YNotebook) -> str:
    """The kernel of the notebook's session; one is started (as a tab would) if none runs."""
    for session in await api.call("api", "sessions"):
        if session.get("path") == path and session.get("kernel"):
            return str(session["kernel"]["id"])
    metadata = notebook.ydoc.get("meta", type=Map).get("metadata")
    spec = (metadata.to_py() if isinstance(metadata, Map) else {}) or {}
    name = (spec.get("kernelspec") or {}).get("name") or "python3"
    body = {"path": path, "type": "notebook", "name": "", "kernel": {"name": name}}
    session = await api.call("api", "sessions", method="POST", body=body)
    return str(session["kernel"]["id"])


ASK_AFTER_SECONDS = 5.0
"""How long a cell may show another run than the one followed before the server is asked
whether the followed run is still pending."""

EndedElsewhere = Callable[[str, str], Awaitable["str | None"]]
"""``(cell_id, run_id)``: how that run ended if the server no longer has it pending
(``"ended"`` when it keeps no record of it), or None while it is queued or running."""


class RunFollower:
    """Prints the outputs of the ticket's cells, one cell after the other, as they come.

    A cell shows one run at a time. Should the followed run never show (the notebook was
    replaced on disk, or the server restarted, and the cell ran again before this client
    saw the run's end), the server is asked, every :data:`ASK_AFTER_SECONDS`, whether it
    is still pending; once it is not, following it ends with how it ended. Rejected:
    waiting for the run's own marker only, which left a ``jupyter loop run`` waiting for
    ever (chaos seed 2028, trials 20 and 84).
    """

    def __init__(
        self,
        notebook: YNotebook,
        out: TextIO,
        err: TextIO,
        ended_elsewhere: EndedElsewhere | None = None,
        ask_after: float = ASK_AFTER_SECONDS,
    ) -> None:
        self._ended_elsewhere = ended_elsewhere
        self._ask_after = ask_after
        self._notebook = notebook
        self._out = out
        self._err = err
        self._style = Style(tty=out.isatty())
        self._err_style = Style(tty=err.isatty())
        self._changed = asyncio.Event()
        self._subscription = notebook.ydoc.observe(lambda _: self._changed.set())

    def close(self) -> None:
        self._notebook.ydoc.unobserve(self._subscription)

    def _cell(self, cell_id: str) -> tuple[int, Any] | None:
        for index, ycell in enumerate(self._notebook.ycells):
            if ycell.get("id") == cell_id:
                return index, ycell
        return None

    def _marker(self, cell_id: str) -> CellMarker | None:
        value = self._notebook.ydoc.get(BOARD, type=Map).get(cell_id)
        return CellMarker.from_y(dict(value)) if isinstance(value, dict) else None

    async def follow(self, cells: list[dict[str, Any]]) -> list[str]:
        """Follow every cell to its end; returns how each ended (``ok``, ``error``, ...)."""
        total = len(cells)
        return [
            await self._follow_cell(cell["cell_id"], cell["run_id"], f"[{done}/{total}]")
            for done, cell in enumerate(cells, start=1)
        ]

    async def _follow_cell(self, cell_id: str, run_id: str, progress: str) -> str:
        style = self._err_style
        follower = OutputFollower(self._style)
        found = self._cell(cell_id)
        number = found[0] + 1 if found else "?"
        self._say(style.paint(f"▶ cell {number} ({visible(cell_id)})", BOLD) + f" {progress}")
        loop = asyncio.get_running_loop()
        ask_at = loop.time() + self._ask_after
        while True:
            self._changed.clear()
            found = self._cell(cell_id)
            if found is None:
                self._say(style.paint("  deleted while it ran", RED))
                return "deleted"
            marker = self._marker(cell_id)
            this_run = marker is not None and marker.run_id == run_id
            if marker is None or not this_run or marker.state == QUEUED:
                # Outputs are cleared when a run starts: until this run has started, the
                # outputs shown are those of the run before.
                if not this_run and loop.time() >= ask_at:
                    ask_at = loop.time() + self._ask_after
                    ended = await self._ask_ended(cell_id, run_id)
                    if ended is not None:
                        return ended
                await self._next_change()
                continue
            if marker.status != "aborted":  # a dropped run never started: nothing to show
                outputs = found[1].get("outputs")
                self._write(follower.update(outputs.to_py() if outputs is not None else []))
            if marker.state == DONE:
                self._write(follower.finish())
                status = visible(marker.status or "ok")
                note = f": {visible(marker.note)}" if marker.note else ""
                # "aborted" is the board's word for a cell dropped before it started (a cell
                # before it failed): a user reads "aborted" as stopped midway.
                shown = "not run" if status == "aborted" else status
                self._say(style.paint(f"  {shown}{note}", GREEN if status == "ok" else RED))
                return status
            await self._next_change()

    async def _ask_ended(self, cell_id: str, run_id: str) -> str | None:
        if self._ended_elsewhere is None:
            return None
        status = await self._ended_elsewhere(cell_id, run_id)
        if status is None:
            return None
        shown = visible(status)
        self._say(
            self._err_style.paint(
                f"  {shown} (the cell has run again since: it shows a later run's outputs)",
                GREEN if status == "ok" else RED,
            )
        )
        return status

    async def _next_change(self) -> None:
        try:
            await asyncio.wait_for(self._changed.wait(), 1.0)
        except asyncio.TimeoutError:
            pass

    def _write(self, text: str) -> None:
        if text:
            self._out.write(text)
            self._out.flush()

    def _say(self, line: str) -> None:
        self._err.write(line + "\n")
        self._err.flush()


async def run_command(
    api: Api, path: str, cells: tuple[str, ...], out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Run the cells; 0 if every one ended ``ok``, 1 if one did not, 130 when detached."""
    async with api.room(path) as notebook:
        cell_ids = pick_cells(notebook, cells)
        if not cell_ids:
            raise CliError("The notebook has no code cells.")
        kernel_id = await notebook_kernel(api, path, notebook)
        body = {
            "path": path,
            "cell_ids": cell_ids,
            "kernel_id": kernel_id,
            "started_from": "terminal",  # the run history says so
        }
        ticket = await api.call("api", "jupyter-loop", "runs", method="POST", body=body)
        queued = [c for c in ticket["cells"] if c["state"] != DONE]
        follower = RunFollower(notebook, out, err, lambda c, r: run_ended(api, path, c, r))
        interrupt = lambda: api.call("api", "kernels", kernel_id, "interrupt", method="POST")  # noqa: E731
        try:
            ended = await until_detached(follower.follow(queued), interrupt, err)
        finally:
            follower.close()
    if ended is None:
        return DETACHED
    return 0 if all(status == "ok" for status in ended) else 1


async def run_ended(api: Api, path: str, cell_id: str, run_id: str) -> str | None:
    """How run ``run_id`` of ``cell_id`` ended, from the run history, once the server no
    longer lists it as queued or running (``"ended"``: the history keeps no record)."""
    try:
        pending = await api.call("api", "jupyter-loop", "runs", query=urlencode({"path": path}))
        if any(cell.get("run_id") == run_id for cell in pending.get("cells", [])):
            return None
        query = urlencode({"path": path, "cell_id": cell_id, "limit": 100})
        history = await api.call("api", "jupyter-loop", "history", query=query)
    except CliError:  # the server is restarting, or says no: keep following the document
        return None
    run = next((r for r in history.get("runs", []) if r.get("run_id") == run_id), None)
    return str(run.get("status") or "ended") if run is not None else "ended"


async def until_detached(
    following: Awaitable[T],
    interrupt: Callable[[], Awaitable[Any]],
    err: TextIO,
    doing: str = "Interrupting the kernel",
) -> T | None:
    """Ctrl-C once: ``interrupt`` (saying ``doing``). Twice: stop following; it goes on."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(following)
    presses: list[asyncio.Task[Any]] = []

    def pressed() -> None:
        if presses:
            err.write("\nDetached; the run goes on on the server.\n")
            task.cancel()
            return
        err.write(f"\n{doing} (Ctrl-C again to detach)…\n")
        presses.append(asyncio.ensure_future(interrupt()))

    loop.add_signal_handler(signal.SIGINT, pressed)
    try:
        return await task
    except asyncio.CancelledError:
        return None
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if presses:
            await asyncio.gather(*presses, return_exceptions=True)
