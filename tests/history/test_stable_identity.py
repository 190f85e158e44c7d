"""A request carrying the server's own token has one name, the same at every request and on
every channel (issue 21, part 5).

Jupyter names each token-authenticated request without a login cookie after a new random
moon ("Anonymous Io", then "Anonymous Europa"), so an MCP client, the terminal client or a
script showed a different person at every call in the journal, the approvals and the run
history. The server's identity provider is left as Jupyter configures it here (no named
user), as on a fresh ``jupyter lab``.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from http.cookies import SimpleCookie
from typing import Any

import pytest
from mcp_helpers import call
from test_history import SOCKET, history
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_loop.document.presence import person_name

JOURNAL = ("api", "jupyter-loop", "agent", "journal")


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"external_approval_timeout": 60.0}


async def test_token_requests_are_one_person_on_every_channel(
    loop_mcp_session: Any, write_notebook: Any, start_kernel: Any, jp_ws_fetch: Any, api: Any,
    run_cells: Any,
) -> None:  # fmt: skip
    local = getpass.getuser()
    path = write_notebook("who.ipynb", "print(1)", "print(2)")
    kernel_id = await start_kernel(path)
    for _ in range(2):
        async with loop_mcp_session() as session:
            await call(session, "read_cell", path=path, cell_id="c0")
            await call(session, "get_outputs", path=path, cell_id="c0")
    journal = (await api(*JOURNAL, params={"path": path}))["entries"]
    assert {e["by"] for e in journal if e["action"] == "external_call"} == {
        f'an MCP client of {local}, calling itself "test-agent"'
    }
    await run_cells(path, "c0", kernel_id=kernel_id)  # REST
    socket = await jp_ws_fetch(*SOCKET)  # the runs socket
    run = {"path": path, "cell_ids": ["c1"], "kernel_id": kernel_id}
    await socket.write_message(json.dumps({"request_id": "r1", "run": run}))
    assert "ticket" in json.loads(await socket.read_message())
    socket.close()
    ran: list[dict[str, Any]] = []
    while len(ran) < 2:  # the history's writer gathers runs for half a second
        await asyncio.sleep(0.2)
        ran = await history(api, path)
    assert {(r["cell_id"], r["user"]) for r in ran} == {("c0", local), ("c1", local)}


async def test_a_browser_login_cookie_is_the_same_person(
    write_notebook: Any, start_kernel: Any, jp_serverapp: Any, jp_http_port: int,
    jp_base_url: str, api: Any,
) -> None:  # fmt: skip
    # A tab's runs socket carries only the login cookie the token's login left, and
    # Jupyter's identity provider keeps a new "Anonymous <moon>" in it per browser
    # session: the history named the tab's run after the moon while the panel, whose
    # requests carry the token, said the login name (issue 42 §1).
    local = getpass.getuser()
    path = write_notebook("cookie.ipynb", "print(1)")
    kernel_id = await start_kernel(path)
    base = f"http://localhost:{jp_http_port}{jp_base_url}"
    token = jp_serverapp.identity_provider.token
    me = await AsyncHTTPClient().fetch(base + "api/me", headers={"Authorization": f"token {token}"})
    jar: SimpleCookie = SimpleCookie()
    for header in me.headers.get_list("Set-Cookie"):
        jar.load(header)
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in jar.items())
    assert json.loads(me.body)["identity"]["name"].startswith("Anonymous ")  # Jupyter's own
    url = (base + "api/jupyter-loop/runs/socket").replace("http", "ws", 1)
    socket = await websocket_connect(HTTPRequest(url, headers={"Cookie": cookie}))
    run = {"path": path, "cell_ids": ["c0"], "kernel_id": kernel_id}
    await socket.write_message(json.dumps({"request_id": "r1", "run": run}))
    assert "ticket" in json.loads(await socket.read_message())
    socket.close()
    ran: list[dict[str, Any]] = []
    while not ran:
        await asyncio.sleep(0.2)
        ran = await history(api, path)
    assert [(r["user"], r["by"]) for r in ran] == [(local, f"a tab of {local}")]
    # Where the agents see who has the notebook open, that tab is the same person.
    tab = {"user": json.loads(me.body)["identity"]}
    assert person_name(tab) == local
