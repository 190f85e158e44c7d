"""Smoke test behind JupyterHub: a single-user server under ``/user/NAME/``.

A real hub (DummyAuthenticator, SimpleLocalProcessSpawner, configurable-http-proxy)
spawns ``jupyterhub-singleuser`` with jupyter-loop; a chatty cell runs through the
proxy with a hub token and no client connected.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import notebook_json
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from jupyter_loop.execution.budget import METADATA_KEY
from jupyter_loop.testing.server_process import free_port

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("configurable-http-proxy") is None,
        reason="configurable-http-proxy is not on PATH (scripts/test installs it from npm)",
    ),
]

NAME = "ada"
TOKEN = "jupyter-loop-hub-smoke-token"
CHATTY = "import time\nfor i in range(300):\n    print('line', i, flush=True)\n    time.sleep(0.01)"
HUGE = "for i in range(20000):\n    print('huge', i)"
BUDGET = 16_000  # bytes a cell keeps in the notebook: the huge cell goes over, the chatty one not


def hub_config(home: Path, port: int) -> str:
    user_home = home / "users" / "{username}"
    settings = {
        "hub": {"ip": "127.0.0.1", "port": port, "hub_ip": "127.0.0.1", "hub_port": free_port()},
        "proxy_api": f"http://127.0.0.1:{free_port()}",
        "db": f"sqlite:///{home / 'hub.sqlite'}",
        "cookie": str(home / "cookie_secret"),
        "home": str(user_home),
        "cmd": [sys.executable, "-m", "jupyterhub.singleuser"],
        "args": [
            "--allow-root",
            "--YDocExtension.document_save_delay=0.5",
            "--JupyterLoopApp.save_interval=0.5",
            f"--JupyterLoopApp.output_budget_bytes={BUDGET}",
        ],
        "token": TOKEN,
    }
    return f"""
settings = {json.dumps(settings)}
c.JupyterHub.ip = settings["hub"]["ip"]
c.JupyterHub.port = settings["hub"]["port"]
c.JupyterHub.hub_ip = settings["hub"]["hub_ip"]
c.JupyterHub.hub_port = settings["hub"]["hub_port"]
c.ConfigurableHTTPProxy.api_url = settings["proxy_api"]
c.JupyterHub.db_url = settings["db"]
c.JupyterHub.cookie_secret_file = settings["cookie"]
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = settings["home"]
c.Spawner.cmd = settings["cmd"]
c.Spawner.args = settings["args"]
c.Spawner.env_keep = ["PATH", "PYTHONPATH", "LANG", "JUPYTERHUB_SINGLEUSER_APP"]
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.JupyterHub.services = [{{"name": "smoke", "api_token": settings["token"]}}]
c.JupyterHub.load_roles = [{{
    "name": "smoke",
    "scopes": ["admin:users", "admin:servers", "access:servers"],
    "services": ["smoke"],
}}]
"""


class Hub:
    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"

    async def call(self, path: str, method: str = "GET", body: Any = None) -> Any:
        request = HTTPRequest(
            f"{self.url}{path}",
            method=method,
            body=None if body is None else json.dumps(body),
            headers={"Authorization": f"token {TOKEN}"},
            request_timeout=120,
        )
        response = await AsyncHTTPClient().fetch(request)
        return json.loads(response.body) if response.body else None


@pytest.fixture
def hub_process(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    (tmp_path / "jupyterhub_config.py").write_text(hub_config(tmp_path, port))
    log = (tmp_path / "hub.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyterhub", "-f", str(tmp_path / "jupyterhub_config.py")],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield port
    finally:
        process.terminate()  # the hub stops the servers it spawned, and its proxy
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


async def hub_up(port: int) -> Hub:
    hub = Hub(port)
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        try:
            await hub.call("/hub/api/")
            return hub
        except (OSError, HTTPClientError):
            assert asyncio.get_running_loop().time() < deadline, "JupyterHub did not start"
            await asyncio.sleep(0.3)


async def spawned(hub: Hub) -> None:
    await hub.call("/hub/api/users", method="POST", body={"usernames": [NAME]})
    try:
        await hub.call(f"/hub/api/users/{NAME}/server", method="POST", body={})
    except HTTPClientError as e:
        if e.code != 202:
            raise
    deadline = asyncio.get_running_loop().time() + 120
    while True:
        user = await hub.call(f"/hub/api/users/{NAME}")
        if (user.get("servers") or {}).get("", {}).get("ready"):
            return
        assert asyncio.get_running_loop().time() < deadline, f"the server never came up: {user}"
        await asyncio.sleep(0.5)


@pytest.mark.timeout(300)
async def test_a_chatty_run_behind_the_hub_is_saved_whole_with_user_links(hub_process: int):
    hub = await hub_up(hub_process)
    await spawned(hub)
    base = f"/user/{NAME}/"
    path = "chatty.ipynb"
    content = json.loads(notebook_json(CHATTY, HUGE))
    model = {"type": "notebook", "format": "json", "content": content}
    await hub.call(f"{base}api/contents/{path}", method="PUT", body=model)
    session = {"path": path, "type": "notebook", "name": "", "kernel": {"name": "python3"}}
    await hub.call(f"{base}api/sessions", method="POST", body=session)
    body = {"path": path, "cell_ids": ["c0", "c1"]}
    await hub.call(f"{base}api/jupyter-loop/runs", method="POST", body=body)

    saved: dict[str, Any] = {}

    async def poll() -> None:
        while True:
            model = await hub.call(f"{base}api/contents/{path}")
            cells = model["content"]["cells"]
            if all(cell.get("execution_count") for cell in cells):
                saved["cells"] = cells
                return
            await asyncio.sleep(0.5)

    await asyncio.wait_for(poll(), timeout=120)
    chatty, huge = saved["cells"]
    text = "".join(o.get("text", "") for o in chatty["outputs"])
    assert text == "".join(f"line {i}\n" for i in range(300))
    markers = [o for o in huge["outputs"] if METADATA_KEY in o.get("metadata", {})]
    links = [m["metadata"][METADATA_KEY]["full_output"] for m in markers]
    assert links, f"no full-output marker in {json.dumps(huge['outputs'])[:500]}"
    for marker, link in zip(markers, links, strict=True):
        assert link.startswith(f"{base}api/jupyter-loop/outputs/"), link
        assert f'href="{link}"' in marker["data"]["text/html"]
    full = await AsyncHTTPClient().fetch(
        HTTPRequest(f"{hub.url}{links[0]}", headers={"Authorization": f"token {TOKEN}"})
    )
    assert b"huge 19999" in full.body
