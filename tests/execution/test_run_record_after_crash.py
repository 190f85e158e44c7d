"""The run history after a crash tells the truth (issue 42 §1): a tab's run, taken over
by a restarted server on the kernel a keeper kept, is one record with its source, its
channel, its start and a mark that it was taken over; and the tab's person has the one
name the server gives the holder of its token. A real server process, SIGKILLed; a real
kept ipykernel; the run asked over the runs socket with a login cookie, as a tab does."""

from __future__ import annotations

import asyncio
import getpass
import os
import subprocess
import sys
import time
from http.cookies import SimpleCookie
from urllib.parse import urlencode

import pytest
from kept_helpers import PATH, ended_in_file, lines_seen, printed, started
from loop_fixtures import Serve
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_loop.testing.server_process import TOKEN, ServerProcess, ask_run_socket

LINES = 200
SLOW = f"import time\nfor i in range({LINES}):\n    print(i, flush=True)\n    time.sleep(0.1)"


async def login_cookie(server: ServerProcess) -> str:
    """The login cookie a browser keeps after opening the server's URL with its token."""
    response = await AsyncHTTPClient().fetch(
        server.url("api", "me"), headers={"Authorization": f"token {TOKEN}"}
    )
    jar: SimpleCookie = SimpleCookie()
    for header in response.headers.get_list("Set-Cookie"):
        jar.load(header)
    assert jar, "the server set no login cookie"
    return "; ".join(f"{name}={morsel.value}" for name, morsel in jar.items())


async def tab_run(server: ServerProcess, cookie: str, cell_id: str) -> str:
    """Ask for the cell's run over the runs socket with the cookie only (no token), as a
    tab does; the socket is closed right after, as when the tab is closed. Its run id."""
    url = server.url("api", "jupyter-loop", "runs", "socket").replace("http", "ws", 1)
    socket = await websocket_connect(HTTPRequest(url, headers={"Cookie": cookie}))
    try:
        ticket = await ask_run_socket(socket, {"path": PATH, "cell_ids": [cell_id]})
    finally:
        socket.close()
    return str(ticket["cells"][0]["run_id"])


async def cli(server: ServerProcess, *args: str) -> tuple[int, str, str]:
    """``jupyter loop ARGS`` as a user runs it."""
    environment = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(server.home / "runtime"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "jupyter_loop.cli", *args,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode or 0, out.decode(), err.decode()


@pytest.mark.timeout(240)
async def test_a_tab_run_taken_over_after_a_crash_is_one_true_record(loop_serve: Serve) -> None:
    server = loop_serve()
    await started(server, "x = 1", SLOW)
    cookie = await login_cookie(server)
    asked = time.time()
    run_id = await tab_run(server, cookie, "c1")
    await lines_seen(server, 10)  # the run has started (the tab is closed already)
    await asyncio.sleep(1)
    crashed = time.time()
    server.crash()

    server.start()
    await server.ready()
    done = await ended_in_file(server, 1, timeout=120)
    assert printed(done.cells[1].outputs) == list(range(LINES))  # every line, once

    query = urlencode({"path": PATH, "cell_id": "c1"})
    runs = []
    for _ in range(300):  # a save may hold every line before the run's end is heard
        runs = (await server.api("api", "jupyter-loop", f"history?{query}"))["runs"]
        if runs:
            break
        await asyncio.sleep(0.1)
    assert [run["run_id"] for run in runs] == [run_id], runs  # once, no "never ran" row
    run = runs[0]
    assert run["source"] == SLOW
    assert run["channel"] == "tab"
    assert run["user"] == getpass.getuser()  # the token holder's one name, not a moon
    assert run["started"] is not None and asked <= run["started"] < crashed
    assert run["queued"] <= run["started"]
    assert run["ended"] > crashed
    assert run["status"] == "ok"
    assert run["taken_over"] is True

    code, out, err = await cli(server, "history", PATH, "c1")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 1, out
    assert "never ran" not in lines[0]
    assert f"by a tab of {getpass.getuser()}" in lines[0]
    assert "taken over after a server restart" in lines[0]
    assert "import time (+3 lines)" in lines[0]
    server.kill()
