"""Cells on remote kernels: a real Jupyter Kernel Gateway behind a real Jupyter server.

The server is started with ``GatewayClient.url`` (``--gateway-url``), so its kernels live
in the gateway and are reached over a websocket, with no ZeroMQ connection info at all.
What must hold alike for the server's own kernels is one test run on both
(``on_local_and_gateway``).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from gateway_fixtures import (  # noqa: F401 (fixtures)
    enterprise_gateway,
    gateway,
    jp_server_config,
    kernel_gateway,
    on_both_gateways,
    on_local_and_gateway,
)
from loop_helpers import wait_for
from test_execution_service import counted, counting, finished
from test_execution_stdin import answer
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect


@on_both_gateways
async def test_run_all_with_no_client_ends_on_disk(
    write_notebook, read_notebook, start_kernel, run_cells, jp_serverapp
):
    path = write_notebook("remote.ipynb", "print('line', 1)\nprint('line', 2)", "1 + 1")
    await start_kernel(path)
    assert type(jp_serverapp.kernel_manager).__name__ == "GatewayMappingKernelManager"
    await run_cells(path, "c0", "c1")
    second = await wait_for(finished(read_notebook, path, 1), timeout=60)
    first = read_notebook(path).cells[0]
    assert first.outputs == [
        {"output_type": "stream", "name": "stdout", "text": "line 1\nline 2\n"}
    ]
    assert (first.execution_count, second.execution_count) == (1, 2)
    assert second.outputs[0]["data"]["text/plain"] == "2"


class BrowserKernel:
    """A browser-like client of the kernel: JupyterLab's websocket to the Jupyter server."""

    def __init__(self, socket: WebSocketClientConnection) -> None:
        self.socket = socket
        self.received: list[dict[str, Any]] = []
        self.sent: set[str] = set()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while (raw := await self.socket.read_message()) is not None:
            if isinstance(raw, str):
                self.received.append(json.loads(raw))

    def execute(self, code: str) -> str:
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": "execute_request", "username": "browser"}
        header |= {"session": "browser-session", "version": "5.3", "date": ""}
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": True}
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
        self.socket.write_message(json.dumps({**message, "channel": "shell"}))
        self.sent.add(msg_id)
        return msg_id

    def replies(self, channel: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("channel") == channel]

    def reply_to(self, msg_id: str) -> dict[str, Any] | None:
        for message in self.replies("shell"):
            if message["parent_header"].get("msg_id") == msg_id:
                return message
        return None


@asynccontextmanager
async def browser_kernel(
    kernel_id: str, port: int, base_url: str, headers: dict[str, str]
) -> AsyncIterator[BrowserKernel]:
    url = f"ws://127.0.0.1:{port}{base_url}api/kernels/{kernel_id}/channels?session_id=browser"
    socket = await websocket_connect(HTTPRequest(url, headers=headers))
    browser = BrowserKernel(socket)
    try:
        yield browser
    finally:
        socket.close()
        await asyncio.wait({browser._reader}, timeout=5)


async def test_replies_never_reach_a_browser_connected_to_the_same_kernel(
    write_notebook,
    start_kernel,
    run_cells,
    open_tab,
    api,
    jp_http_port,
    jp_base_url,
    jp_auth_header,
):
    ask = "name = input('name? ')\nprint('hello', name)"
    path = write_notebook("shared.ipynb", counting(5, 0.1), ask, "40 + 2")
    kernel_id = await start_kernel(path)
    headers = dict(jp_auth_header)
    async with (
        browser_kernel(kernel_id, jp_http_port, jp_base_url, headers) as browser,
        open_tab(path) as tab,
    ):
        before = browser.execute("'from the browser'")
        await wait_for(lambda: browser.reply_to(before), timeout=60)
        await run_cells(path, "c0", "c1", "c2")
        during = browser.execute("'while jupyter-loop runs'")
        request = await wait_for(lambda: (tab.marker("c1") or {}).get("input"), timeout=60)
        await answer(api, path, "c1", request["request_id"], "Ada")
        await wait_for(lambda: tab.cell("c2").get("execution_count"), timeout=60)
        await wait_for(lambda: browser.reply_to(during), timeout=60)
        assert tab.text("c0") == counted(5)
        # JupyterLab echoes the prompt, a space, then the answer (as its stdin widget does).
        assert tab.text("c1") == "name?  Ada\nhello Ada\n"
        assert tab.cell("c2")["outputs"][0]["data"]["text/plain"] == "42"
        assert [tab.marker(c)["status"] for c in ("c0", "c1", "c2")] == ["ok"] * 3
        # The browser saw our cells' outputs on IOPub (a broadcast) but no reply or
        # input request of ours: those came back to jupyter-loop's own connection.
        answered = {m["parent_header"].get("msg_id") for m in browser.replies("shell")}
        assert answered == {before, during}
        assert browser.replies("stdin") == []
        seen = {m["parent_header"].get("msg_id") for m in browser.replies("iopub")}
        assert seen - browser.sent, "the browser should see our runs' IOPub broadcasts"


async def test_display_updates_reach_the_cell_that_showed_it(
    write_notebook, read_notebook, start_kernel, run_cells
):
    path = write_notebook(
        "display.ipynb", "h = display('first', display_id=True)", "h.update('second')"
    )
    await start_kernel(path)
    await run_cells(path, "c0", "c1")
    await wait_for(finished(read_notebook, path, 1), timeout=60)

    def updated() -> Any:
        notebook = read_notebook(path)
        outputs = notebook.cells[0].outputs if notebook else []
        return outputs and outputs[0]["data"]["text/plain"] == "'second'"

    await wait_for(updated, timeout=30)


@on_local_and_gateway
async def test_interrupt_ends_the_running_cell_and_drops_the_queue(
    write_notebook, start_kernel, run_cells, open_tab, api
):
    path = write_notebook(
        "interrupt.ipynb", "import time\nprint('start', flush=True)\ntime.sleep(60)", "2"
    )
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: tab.text("c0") == "start\n", timeout=60)
        await api("api", "kernels", kernel_id, "interrupt", method="POST", body="")
        await wait_for(lambda: (tab.marker("c0") or {}).get("status") == "error")
        await wait_for(lambda: (tab.marker("c1") or {}).get("status") == "aborted")
        assert tab.cell("c0")["outputs"][-1]["ename"] == "KeyboardInterrupt"
        assert [tab.cell(c)["execution_state"] for c in ("c0", "c1")] == ["idle", "idle"]


@on_local_and_gateway
async def test_restart_cuts_the_run_off_and_the_kernel_runs_again(
    write_notebook, start_kernel, run_cells, open_tab, api
):
    path = write_notebook(
        "restart.ipynb", "import time\nprint('go', flush=True)\ntime.sleep(60)", "3"
    )
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: tab.text("c0") == "go\n", timeout=60)
        await api("api", "kernels", kernel_id, "restart", method="POST", body="")
        await wait_for(lambda: tab.cell("c0")["execution_state"] == "idle")
        await wait_for(lambda: tab.cell("c1")["execution_state"] == "idle")
        assert tab.marker("c0")["status"] == "cut_off"
        assert tab.text("c0") == "go\n"
        await run_cells(path, "c1")
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 1, timeout=60)


async def test_kernel_death_is_reported_and_the_restarted_kernel_runs(
    write_notebook, start_kernel, run_cells, open_tab
):
    dies = "import os, time\nprint('bye', flush=True)\ntime.sleep(0.5)\nos._exit(1)"
    path = write_notebook("death.ipynb", dies, "'back'")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: "kernel died and was restarted" in tab.text("c0"), timeout=60)
        assert tab.text("c0").startswith("bye\n")
        assert tab.marker("c0")["status"] == "cut_off"
        await wait_for(lambda: (tab.marker("c1") or {}).get("status") == "aborted")
        await run_cells(path, "c1")
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 1, timeout=60)


async def test_a_kernel_the_gateway_drops_mid_run_is_reported(
    write_notebook,
    start_kernel,
    run_cells,
    open_tab,
    gateway,  # noqa: F811
):
    path = write_notebook("dropped.ipynb", "import time\nprint('go', flush=True)\ntime.sleep(60)")
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.text("c0") == "go\n", timeout=60)
        request = HTTPRequest(f"{gateway.url}/api/kernels/{kernel_id}", method="DELETE")
        await AsyncHTTPClient().fetch(request)
        await wait_for(lambda: "kernel died" in tab.text("c0"), timeout=60)
        assert tab.marker("c0")["status"] == "cut_off"
        assert tab.cell("c0")["execution_state"] == "idle"
