"""The world a chaos trial acts on: one server, one notebook, its tabs, and what is expected.

The notebook's code cells print numbered lines tagged with the cell's current code
(``c1-t0 0``, ``c1-t0 1``, ...), so what a cell shows can be checked against what its
kernel printed. Tabs type comment lines (``# A 3``) at the end of a cell: they never
change what the cell prints, and each tab's lines stay whole and in its order whatever
the merge (a Y insert is contiguous), so "sources as last typed" is checkable without
knowing the merge order.

:class:`Expected` is the model the checks compare against; :class:`World` keeps it up to
date as the events (``chaos_events.py``) act.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import nbformat
from jupyter_ydoc import YNotebook
from pycrdt import Map, Provider, Text
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from ..agent.proposals import PROPOSALS_MAP
from ..cli.ychannel import TornadoChannel
from ..document.reference import NotebookRef
from .server_process import TOKEN, ServerProcess

LINES = 12
"""Lines each cell prints; with :data:`PAUSE` a run lasts long enough to be caught in flight."""
PAUSE = 0.03
STOP_TIMEOUT = 30.0


def cell_code(tag: str, lines: int = LINES) -> str:
    return (
        f"import time\nfor i in range({lines}):\n"
        f"    print('{tag}', i, flush=True)\n    time.sleep({PAUSE})"
    )


def printed_lines(tag: str, lines: int = LINES) -> list[str]:
    return [f"{tag} {i}" for i in range(lines)]


@dataclass
class ExpectedCell:
    """What one cell must hold: its code, then each tab's typed lines in that tab's order."""

    cell_id: str
    code: str
    tag: str
    tags: list[str] = field(default_factory=list)
    """Every tag the cell had in the trial: a run's lines carry one of them."""
    typed: dict[str, list[str]] = field(default_factory=dict)
    stdout: list[str] | None = field(default_factory=list)
    """The stdout lines the cell must show now, when known: none at first, a whole run's
    once a run is over with nothing after it; ``None`` while a run may be in flight."""
    agent_asked: bool = False
    """An agent asked to run the cell: a run it was approved for is not run if a person
    changes the code before its turn (the cell then shows only the server's note)."""

    def type(self, tab: str, line: str) -> None:
        self.typed.setdefault(tab, []).append(line)


@dataclass
class Expected:
    cells: list[ExpectedCell]
    restarted: bool = False
    """The server restarted in the trial: the room was loaded again from the store."""
    cut: bool = False
    """A run was in flight at a restart: its cell may hold part of its lines, then a note."""
    out_of_band: bool = False
    """The ``.ipynb`` was replaced while a run was in flight (open defect c)."""
    offered: dict[str, list[str]] = field(default_factory=dict)
    """Lines a tab typed offline into a cell that a checkout then replaced: they must come
    back in a pending proposal on the cell, not in it."""

    def cell(self, cell_id: str) -> ExpectedCell:
        return next(cell for cell in self.cells if cell.cell_id == cell_id)


class ChaosTab:
    """A Y client of the notebook's room that can lose its connection and keep its doc,
    as a browser tab on a laptop whose lid closes."""

    def __init__(self, name: str, world: World) -> None:
        self.name = name
        self.world = world
        self.notebook = YNotebook()
        self._serving: asyncio.Task[None] | None = None
        self._connection: WebSocketClientConnection | None = None
        self.typed = 0
        self.room_id = ""

    @property
    def online(self) -> bool:
        return self._serving is not None

    async def connect(self, timeout: float = 30) -> None:
        server, path = self.world.server, self.world.path
        session = await server.api(
            "api", "collaboration", "session", path, method="PUT",
            body={"format": "json", "type": "notebook"},
        )  # fmt: skip
        room = self.room_id = NotebookRef(path, str(session["fileId"])).room_id
        url = f"ws://127.0.0.1:{server.port}/api/collaboration/room/{room}"
        request = HTTPRequest(
            f"{url}?sessionId={session['sessionId']}", headers={"Authorization": f"token {TOKEN}"}
        )
        self._connection = await websocket_connect(request)
        channel = TornadoChannel(self._connection, room)
        self._serving = asyncio.ensure_future(self._serve(channel))
        # A tab back from offline has its cells already: it is connected once it has sent
        # what it typed meanwhile (else an event closing it at once would drop that).
        await asyncio.wait_for(channel.exchanged(), timeout)
        deadline = time.monotonic() + timeout
        while self.notebook.cell_number == 0:
            if time.monotonic() > deadline:
                raise TimeoutError(f"tab {self.name} never received the notebook")
            await asyncio.sleep(0.02)

    async def _serve(self, channel: TornadoChannel) -> None:
        # The provider lives in a task of its own: anyio's task group it opens must be
        # left by the task that entered it.
        async with Provider(self.notebook.ydoc, channel):
            await asyncio.Event().wait()  # until cancelled by ``disconnect``

    async def disconnect(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._serving is not None:
            serving, self._serving = self._serving, None
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)

    async def wait_offered(self, cell_id: str, lines: list[str], timeout: float = 10) -> None:
        """Until the tab shows a pending proposal on the cell holding ``lines``, and the
        server's store has had time to write it (its writes are 0.1 s apart)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._offered(cell_id, lines):
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)

    def _offered(self, cell_id: str, lines: list[str]) -> bool:
        proposals = self.notebook.ydoc.get(PROPOSALS_MAP, type=Map).to_py() or {}
        return any(
            isinstance(p, dict)
            and p.get("status") == "pending"
            and p.get("cell_id") == cell_id
            and all(line in str(p.get("new_source") or "") for line in lines)
            for p in proposals.values()
        )

    def type_line(self, cell_id: str) -> str:
        """Type one comment line at the end of the cell, as this tab sees it."""
        self.typed += 1
        line = f"# {self.name} {self.typed}"
        for ycell in self.notebook.ycells:
            if ycell.get("id") == cell_id:
                source = ycell["source"]
                assert isinstance(source, Text)
                source += "\n" + line
                return line
        raise KeyError(f"tab {self.name} has no cell {cell_id}")


class World:
    """One trial's notebook on a (possibly shared) server, with its tabs and expectations."""

    def __init__(self, server: ServerProcess, path: str, cells: int) -> None:
        self.server = server
        self.path = path
        self.expected = Expected(
            [
                ExpectedCell(f"c{i}", cell_code(f"c{i}-t0"), f"c{i}-t0", tags=[f"c{i}-t0"])
                for i in range(cells)
            ]
        )
        self.tabs: dict[str, ChaosTab] = {}
        self.in_flight: list[asyncio.Task[Any]] = []
        self.errors: list[str] = []
        """What failed that should not have (a run refused, a CLI that exited badly)."""
        self.cleanup_delay = 1.0
        self.processes: list[asyncio.subprocess.Process] = []
        self.restarting = False
        self.cut_note = ""
        self._kernel_lock = asyncio.Lock()

    # -- the notebook file -----------------------------------------------------------

    def write_initial(self) -> None:
        notebook = nbformat.v4.new_notebook()
        notebook.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        for cell in self.expected.cells:
            code = nbformat.v4.new_code_cell(cell.code)
            code["id"] = cell.cell_id
            notebook.cells.append(code)
        self.server.root.mkdir(parents=True, exist_ok=True)
        (self.server.root / self.path).write_text(nbformat.writes(notebook), encoding="utf-8")

    def file_json(self) -> dict[str, Any] | None:
        try:
            return dict(json.loads((self.server.root / self.path).read_text(encoding="utf-8")))
        except (ValueError, FileNotFoundError):
            return None

    # -- tabs ------------------------------------------------------------------------

    def online_tabs(self) -> list[ChaosTab]:
        return [tab for tab in self.tabs.values() if tab.online]

    async def open_tab(self, name: str) -> ChaosTab:
        tab = self.tabs.get(name)
        if tab is None or not tab.online:
            typed = tab.typed if tab is not None else 0
            tab = ChaosTab(name, self)  # a reopened tab starts from nothing, as a reload does
            tab.typed = typed  # but its lines go on being numbered: each is told apart
            self.tabs[name] = tab
            await tab.connect()
        return tab

    async def close_all_tabs(self) -> None:
        for tab in self.tabs.values():
            await tab.disconnect()

    # -- settling --------------------------------------------------------------------

    async def settle(self, timeout: float = 30) -> None:
        """Wait until runs are over and the file on disk has every typed line."""
        if self.in_flight:
            await asyncio.wait(self.in_flight, timeout=timeout)
            for task in self.in_flight:
                if task.done() and not task.cancelled() and task.exception() is not None:
                    self.errors.append(f"run request failed: {task.exception()!r}")
            self.in_flight = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if await self._quiet() and self._file_has_typed():
                return
            await asyncio.sleep(0.2)

    async def _quiet(self) -> bool:
        try:
            pending = await self.server.api("api", "jupyter-loop", f"runs?path={quote(self.path)}")
        except Exception:
            return False
        return not pending.get("cells")

    def _file_has_typed(self) -> bool:
        saved = self.file_json()
        if saved is None:
            return False
        sources = {
            cell.get("id"): _joined(cell.get("source", "")) for cell in saved.get("cells", [])
        }
        for cell in self.expected.cells:
            source = sources.get(cell.cell_id)
            if source is None or not source.startswith(cell.code):
                return False
            typed = Counter(line for lines in cell.typed.values() for line in lines)
            if typed - Counter(source.split("\n")):  # as often as typed: a line may repeat
                return False
        return True

    async def settle_typed(self, timeout: float = 20) -> None:
        """Wait until the file on disk has every typed line (runs may go on)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._file_has_typed():
            await asyncio.sleep(0.1)

    async def wait_runs_over(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not await self._quiet():
            if time.monotonic() > deadline:
                raise TimeoutError(f"runs of {self.path} not over in {timeout} s")
            await asyncio.sleep(0.1)

    async def wait_room_has_code(self, timeout: float = 10) -> None:
        """After an out-of-band write: until the room shows the file's code, as every open
        tab sees it (or a passing tab, when none is open).

        The server notices a changed file when it next polls it (up to a second later);
        a tab that typed before that typed into the notebook the file then replaces. That
        is the conflict "the file wins" means, so the trial's next events wait for it.
        """
        deadline = time.monotonic() + timeout
        probe: ChaosTab | None = None
        try:
            while time.monotonic() < deadline:
                tabs = self.online_tabs()
                if not tabs:
                    if probe is None:
                        probe = ChaosTab("probe", self)
                        await probe.connect()
                    tabs = [probe]
                if all(self._tab_has_code(tab) for tab in tabs):
                    return
                await asyncio.sleep(0.1)
        finally:
            if probe is not None:
                await probe.disconnect()

    def _tab_has_code(self, tab: ChaosTab) -> bool:
        sources = {str(c.get("id")): str(c.get("source")) for c in tab.notebook.ycells}
        return all(sources.get(c.cell_id, "").startswith(c.code) for c in self.expected.cells)

    # -- the server ------------------------------------------------------------------

    async def stop_server(self, sig: int) -> None:
        """Stop the server with ``sig``; runs in flight are cut (their requests fail)."""
        self.restarting = True
        running = [task for task in self.in_flight if not task.done()]
        if running or not await self._quiet():
            self.expected.cut = True
            self.cut_note = " with a run in flight"
        else:
            self.cut_note = ""
        if sig == signal.SIGKILL:
            self.server.kill()
        else:
            self._stop_or_dump(sig)
        for process in self.processes:
            if process.returncode is None:
                process.kill()
        for task in self.in_flight:
            task.cancel()
        await asyncio.gather(*self.in_flight, return_exceptions=True)
        self.in_flight = []
        self.processes = []

    def _stop_or_dump(self, sig: int, timeout: float = STOP_TIMEOUT) -> None:
        """Stop with ``sig``; a server still there after ``timeout`` is a finding: its
        threads' stacks go to its log (``PYTHONFAULTHANDLER`` is set for the suite's
        servers: SIGABRT dumps them), then it is killed."""
        process = self.server.process
        assert process is not None
        try:
            self.server.stop(sig, timeout=timeout)
        except subprocess.TimeoutExpired:
            name = signal.Signals(sig).name
            self.errors.append(f"the server did not exit within {timeout:.0f} s of {name}")
            process.send_signal(signal.SIGABRT)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.server.kill()

    async def start_server(self) -> None:
        self.server.start()
        await self.server.ready()
        self.restarting = False
        self.expected.restarted = True

    async def kernel_id(self) -> str:
        """The notebook's kernel, started by the first run that needs one.

        One at a time: two runs asking at once would each find no session and start a
        kernel of their own, and two kernels printing into one cell interleave their
        lines (a browser's session context starts one kernel per notebook).
        """
        async with self._kernel_lock:
            for session in await self.server.api("api", "sessions"):
                if session.get("path") == self.path and session.get("kernel"):
                    return str(session["kernel"]["id"])
            return await self.server.start_kernel(self.path)

    async def end_sessions(self) -> None:
        """Shut the trial's kernel down: trials share a server, not kernels."""
        for session in await self.server.api("api", "sessions"):
            if session.get("path") == self.path:
                await self.server.api("api", "sessions", str(session["id"]), method="DELETE")


def _joined(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)
