"""A real ``jupyter server`` process with jupyter-loop, for tests and benchmarks.

Runs on 127.0.0.1 with its own data, runtime and config directories under ``home``, so
it can be killed and restarted on the same state.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_ydoc import YNotebook
from pycrdt import Map
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from ..cli.ychannel import TabChannel, connect_room
from ..document.reference import NotebookRef
from ..keeper.identity import same_process
from ..keeper.registry import list_entries

TOKEN = "jupyter-loop-test-token"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServerProcess:
    """``jupyter server`` with jupyter-loop, on 127.0.0.1, with state kept in ``home``."""

    def __init__(self, home: Path, *options: str) -> None:
        self.home = home
        self.options = options
        self.root = home / "root"
        self.port = free_port()
        prefix = "--ServerApp.base_url="
        self.base_url = next((o[len(prefix) :] for o in options if o.startswith(prefix)), "/")
        self.process: subprocess.Popen[bytes] | None = None
        self._connection: http.client.HTTPConnection | None = None

    @property
    def ystore(self) -> Path:
        """jupyter-collaboration's store of Y updates, its cache of the live documents."""
        return self.home / "ystore.db"

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PYTHONFAULTHANDLER": "1",  # SIGABRT prints every thread's stack (``stacks``)
            "JUPYTER_DATA_DIR": str(self.home / "data"),
            "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
            "JUPYTER_CONFIG_DIR": str(self.home / "config"),
        }
        defaults = [
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0", "--ServerApp.open_browser=False",
            "--ServerApp.allow_root=True", f"--ServerApp.root_dir={self.root}",
            f"--IdentityProvider.token={TOKEN}",
            f"--SQLiteYStore.db_path={self.ystore}",
            f"--BaseFileIdManager.db_path={self.home / 'fileid.db'}",
            "--YDocExtension.document_save_delay=0.5",
            "--JupyterLoopApp.save_interval=0.5",
        ]  # fmt: skip
        # An option given twice stops the extension from loading: ``options`` replace
        # the defaults of the same name.
        given = {option.split("=", 1)[0] for option in self.options}
        kept = [option for option in defaults if option.split("=", 1)[0] not in given]
        command = [sys.executable, "-m", "jupyter", "server", *kept, *self.options]
        log = (self.home / f"server-{time.time_ns()}.log").open("wb")
        self.process = subprocess.Popen(
            command,
            env=env,
            cwd=self.home,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_default_sigint,
        )

    @property
    def kernels_dir(self) -> Path:
        """The kept kernels' directories (keepers, journals), see ``jupyter_loop.keeper``."""
        return self.home / "data" / "jupyter_loop" / "kernels"

    def crash(self) -> None:
        """The server alone dies at once (SIGKILL), as in an OOM kill: kernels kept by
        their keepers live on."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self.process is not None:
            # Only while it runs: once reaped, its id (and group id) may be another
            # process's (this machine's ids wrap at 32,768; two test suites share it).
            if self.process.poll() is None:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass  # the server has exited already
            self.process.wait(timeout=10)
            self.process = None

    def kill(self) -> None:
        """A crash of the whole machine's share: the server, its kernels and their
        keepers die at once, nothing gets to clean up."""
        self.crash()
        self.kill_kept_kernels()

    def kill_kept_kernels(self) -> None:
        """SIGKILL every keeper and kernel in the registry that is still the process
        recorded (its start time): one that ended long ago left an id that another
        process may hold by now, a young kernel of another test, say (the likely cause of
        kernels that died young and silently in CI, where two suites share the machine
        and process ids wrap at 32,768)."""
        for entry in list_entries(self.kernels_dir):
            kernel = (entry.kernel_pid, entry.kernel_started)
            for pid, started in (kernel, (entry.keeper_pid, entry.keeper_started)):
                if pid and same_process(pid, started):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass

    def stop(
        self, sig: int = signal.SIGTERM, timeout: float = 60, *, leave_kernels: bool = False
    ) -> float:
        """Send ``sig`` to the server alone, as a hub or a service manager does; return the
        seconds until it exits (kernels it leaves behind are then killed, unless
        ``leave_kernels``: they are meant to outlive it)."""
        assert self.process is not None, "stop before start"
        start = time.monotonic()
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise subprocess.TimeoutExpired(e.cmd, e.timeout, output=self.stacks()) from None
        elapsed = time.monotonic() - start
        self.crash() if leave_kernels else self.kill()
        return elapsed

    def stacks(self, lines: int = 120) -> str:
        """The end of the server's log after asking it for every thread's stack (SIGABRT
        with ``PYTHONFAULTHANDLER`` set, as every server started here has): what a server
        that does not stop is waiting for."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        logs = sorted(self.home.glob("server-*.log"))
        if not logs:
            return ""
        text = logs[-1].read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def url(self, *parts: str) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_url}" + "/".join(parts)

    async def api(self, *parts: str, method: str = "GET", body: Any = None) -> Any:
        request = HTTPRequest(
            self.url(*parts),
            method=method,
            body=None if body is None else json.dumps(body),
            headers={"Authorization": f"token {TOKEN}"},
        )
        response = await AsyncHTTPClient().fetch(request)
        return json.loads(response.body or b"null")

    async def ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                await self.api("api", "status")
                return
            except (OSError, HTTPClientError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)

    def saved(self, path: str) -> Any:
        try:
            return nbformat.reads((self.root / path).read_text(encoding="utf-8"), as_version=4)
        except (ValueError, FileNotFoundError):
            return None

    async def start_kernel(self, path: str) -> str:
        """Open a notebook session for ``path``, as JupyterLab does; return its kernel id."""
        session = await self.api(
            "api", "sessions", method="POST",
            body={"path": path, "type": "notebook", "name": "", "kernel": {"name": "python3"}},
        )  # fmt: skip
        return str(session["kernel"]["id"])

    async def kernel_client(self, kernel_id: str) -> AsyncKernelClient:
        """A raw ``jupyter_client`` client of that kernel, its channels started and ready.

        Asked again when jupyter_client says the kernel died before it answered: without a
        kernel manager it reads that from a missed heartbeat, which a loaded machine (six
        sessions on two cores) misses now and then (one bench run in six failed so)."""
        for attempt in range(3):
            client = AsyncKernelClient(
                connection_file=str(self.home / "runtime" / f"kernel-{kernel_id}.json")
            )
            client.load_connection_file()
            client.start_channels()
            try:
                await client.wait_for_ready(timeout=60)
                return client
            except RuntimeError:
                client.stop_channels()
                if attempt == 2:
                    raise
                await asyncio.sleep(1)
        raise AssertionError("unreachable")

    async def open_room(self, path: str) -> tuple[TabChannel, YNotebook]:
        """A tab's channel to the notebook's room (one that outlives a kill of this server
        quietly, as a browser's does) and an empty document to sync through it."""
        session = await self.api(
            "api", "collaboration", "session", path, method="PUT",
            body={"format": "json", "type": "notebook"},
        )  # fmt: skip
        room = NotebookRef(path, str(session["fileId"])).room_id
        query = f"sessionId={session['sessionId']}"
        url = f"ws://127.0.0.1:{self.port}/api/collaboration/room/{room}?{query}"
        connection = await connect_room(
            HTTPRequest(url, headers={"Authorization": f"token {TOKEN}"})
        )
        return TabChannel(connection, room), YNotebook()

    async def open_run_socket(self) -> WebSocketClientConnection:
        """The runs websocket a tab keeps open (``execution/run_socket.py``)."""
        url = self.url("api", "jupyter-loop", "runs", "socket").replace("http", "ws", 1)
        request = HTTPRequest(url, headers={"Authorization": f"token {TOKEN}"})
        return await websocket_connect(request)

    def _post_kept_alive(self, url: str, body: Any) -> Any:
        """POST over one connection kept open between calls, as a browser's ``fetch`` does
        (tornado's client opens a new connection per request, about 1 ms more). It blocks
        the event loop for the request's round trip: Y updates wait in the socket."""
        if self._connection is None:
            self._connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
        self._connection.request("POST", url, body=json.dumps(body), headers=headers)
        response = self._connection.getresponse()
        payload = response.read()
        if response.status >= 400:
            raise RuntimeError(f"POST {url}: {response.status} {payload!r}")
        return json.loads(payload)

    async def timed_run(
        self,
        path: str,
        kernel_id: str,
        board: Map,
        *,
        cell_ids: tuple[str, ...] = ("c0",),
        timeout: float = 60,
        socket: WebSocketClientConnection | None = None,
    ) -> float:
        """Seconds from one run request for ``cell_ids`` until ``board`` (a synced Y map of
        run markers) shows the last of them done: what a browser tab waits for. The
        request goes over ``socket`` (see :meth:`open_run_socket`), as a tab sends it,
        or else as ``POST runs``."""
        last = cell_ids[-1]
        done = asyncio.Event()
        wanted: dict[str, str] = {}

        def check(_: object) -> None:
            marker = board.get(last) or {}
            if marker.get("run_id") == wanted.get("run_id") and marker.get("state") == "done":
                done.set()

        subscription = board.observe(check)
        start = time.perf_counter()
        body = {"path": path, "cell_ids": list(cell_ids), "kernel_id": kernel_id}
        if socket is None:
            ticket = self._post_kept_alive("/api/jupyter-loop/runs", body)
        else:
            ticket = await ask_run_socket(socket, body)
        wanted["run_id"] = ticket["cells"][-1]["run_id"]
        check(None)
        await asyncio.wait_for(done.wait(), timeout)
        elapsed = time.perf_counter() - start
        board.unobserve(subscription)
        return elapsed


def _default_sigint() -> None:
    """In the server's process before it starts: SIGINT at its default, as a terminal or a
    service manager leaves it. A shell without job control starts a background command
    with SIGINT ignored, and a child inherits that (seen when CI's command was started in
    the background: the server never heard the SIGINT a test sent it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def ask_run_socket(socket: WebSocketClientConnection, run: dict[str, Any]) -> Any:
    """Send one run request over the runs websocket; its ticket (raises if refused)."""
    request_id = uuid.uuid4().hex
    await socket.write_message(json.dumps({"request_id": request_id, "run": run}))
    while True:
        message = await socket.read_message()
        if message is None:
            raise RuntimeError("The runs socket closed before it answered.")
        answer = json.loads(message)
        if answer.get("request_id") == request_id:
            if "error" in answer:
                raise RuntimeError(f"Run refused: {answer['error']}")
            return answer["ticket"]


async def reply_and_idle(client: AsyncKernelClient, msg_id: str, timeout: float = 30) -> None:
    """Wait until a raw client has the reply to ``msg_id`` and the kernel's idle status
    after it: when a raw ``jupyter_client`` run is over (the benchmarks' baseline)."""
    replied = idle = False
    while not replied:
        reply = await client.get_shell_msg(timeout=timeout)
        replied = reply["parent_header"].get("msg_id") == msg_id
    while not idle:
        message = await client.get_iopub_msg(timeout=timeout)
        idle = (
            message["parent_header"].get("msg_id") == msg_id
            and message["msg_type"] == "status"
            and message["content"]["execution_state"] == "idle"
        )
