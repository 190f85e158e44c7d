"""A real Jupyter server process, killed and restarted in the middle of a run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from conftest import notebook_json, wait_for
from jupyter_ydoc import YNotebook
from pycrdt import Map, Provider
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect
from yclient import TornadoChannel

TOKEN = "restart-test-token"
LOOP = "import time\nfor i in range(600):\n    print(i, flush=True)\n    time.sleep(0.05)"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServerProcess:
    """``jupyter server`` with jupyter-loop, on 127.0.0.1, with state kept in ``home``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.root = home / "root"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "JUPYTER_DATA_DIR": str(self.home / "data"),
            "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
            "JUPYTER_CONFIG_DIR": str(self.home / "config"),
        }
        command = [
            sys.executable, "-m", "jupyter", "server",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0", "--ServerApp.open_browser=False",
            "--ServerApp.allow_root=True", f"--ServerApp.root_dir={self.root}",
            f"--IdentityProvider.token={TOKEN}",
            f"--SQLiteYStore.db_path={self.home / 'ystore.db'}",
            f"--BaseFileIdManager.db_path={self.home / 'fileid.db'}",
            "--YDocExtension.document_save_delay=0.5",
            "--JupyterLoopApp.save_interval=0.5",
        ]  # fmt: skip
        log = (self.home / f"server-{time.time_ns()}.log").open("wb")
        self.process = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def kill(self) -> None:
        """A crash: the server and its kernels die at once, nothing gets to clean up."""
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
            self.process = None

    def url(self, *parts: str) -> str:
        return f"http://127.0.0.1:{self.port}/" + "/".join(parts)

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


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path)
    yield process
    process.kill()


def printed(cell: Any) -> list[int]:
    text = "".join("".join(o.get("text", "")) for o in cell.outputs if o.get("name") == "stdout")
    return [int(line) for line in text.split()]


async def open_room(server: ServerProcess, path: str) -> tuple[Any, YNotebook]:
    session = await server.api(
        "api", "collaboration", "session", path, method="PUT",
        body={"format": "json", "type": "notebook"},
    )  # fmt: skip
    room = f"json:notebook:{session['fileId']}"
    url = f"ws://127.0.0.1:{server.port}/api/collaboration/room/{room}?sessionId={session['sessionId']}"
    connection = await websocket_connect(
        HTTPRequest(url, headers={"Authorization": f"token {TOKEN}"})
    )
    return TornadoChannel(connection, room), YNotebook()


@pytest.mark.timeout(180)
async def test_a_crash_mid_run_keeps_saved_outputs_and_marks_the_cut(server: ServerProcess):
    path = "crash.ipynb"
    server.root.mkdir(parents=True)
    (server.root / path).write_text(notebook_json(LOOP, "print('queued')"), encoding="utf-8")
    server.start()
    await server.ready()
    await server.api(
        "api", "sessions", method="POST",
        body={"path": path, "type": "notebook", "name": "", "kernel": {"name": "python3"}},
    )  # fmt: skip
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

    channel, notebook = await open_room(server, path)
    async with Provider(notebook.ydoc, channel):
        await wait_for(lambda: notebook.cell_number == 2)
        states = [cell.get("execution_state") for cell in notebook.ycells]
        assert states == ["idle", "idle"]
        markers = notebook.ydoc.get("jupyter_loop:execution", type=Map)
        await wait_for(lambda: (markers.get("c0") or {}).get("status") == "cut_off")
        assert markers.get("c1", {}).get("status") == "aborted"
