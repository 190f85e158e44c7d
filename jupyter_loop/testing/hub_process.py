"""A real JupyterHub on 127.0.0.1 spawning single-user servers with jupyter-loop.

DummyAuthenticator, SimpleLocalProcessSpawner (the hub's own user, ``--allow-root``) and
configurable-http-proxy, which must be on ``PATH``. A service token with admin rights on
users and servers drives it, and reaches the single-user servers through the proxy.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from .server_process import free_port

TOKEN = "jupyter-loop-hub-test-token"


def hub_config(home: Path, port: int, server_args: list[str]) -> str:
    settings = {
        "port": port,
        "hub_port": free_port(),
        "proxy_api": f"http://127.0.0.1:{free_port()}",
        "db": f"sqlite:///{home / 'hub.sqlite'}",
        "cookie": str(home / "cookie_secret"),
        "home": str(home / "users" / "{username}"),
        "cmd": [sys.executable, "-m", "jupyterhub.singleuser"],
        "args": ["--allow-root", *server_args],
        "token": TOKEN,
    }
    return f"""
settings = {json.dumps(settings)}
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = settings["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
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
c.JupyterHub.services = [{{"name": "driver", "api_token": settings["token"]}}]
c.JupyterHub.load_roles = [{{
    "name": "driver",
    "scopes": ["admin:users", "admin:servers", "access:servers"],
    "services": ["driver"],
}}]
"""


class HubProcess:
    """``jupyterhub`` with its proxy; :meth:`stop` also stops the servers it spawned."""

    def __init__(self, home: Path, server_args: list[str]) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server_args = server_args
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        config = self.home / "jupyterhub_config.py"
        config.write_text(hub_config(self.home, self.port, self._server_args))
        log = (self.home / "hub.log").open("wb")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=self.home,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()  # the hub stops its single-user servers and its proxy
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    async def call(self, path: str, method: str = "GET", body: Any = None) -> Any:
        """A request through the proxy with the service token; the decoded JSON answer."""
        request = HTTPRequest(
            f"{self.url}{path}",
            method=method,
            body=None if body is None else json.dumps(body),
            headers={"Authorization": f"token {TOKEN}"},
            request_timeout=120,
        )
        response = await AsyncHTTPClient().fetch(request)
        return json.loads(response.body) if response.body else None

    async def ready(self, timeout: float = 60) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                await self.call("/hub/api/")
                return
            except (OSError, HTTPClientError):
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.3)

    async def spawn(self, name: str, timeout: float = 120) -> str:
        """Create user ``name``, start their server and wait for it; return its base URL."""
        await self.call("/hub/api/users", method="POST", body={"usernames": [name]})
        await self.call(f"/hub/api/users/{name}/server", method="POST", body={})
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            user = await self.call(f"/hub/api/users/{name}")
            if (user.get("servers") or {}).get("", {}).get("ready"):
                return f"/user/{name}/"
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"the server of {name} never came up: {user}")
            await asyncio.sleep(0.5)

    async def stop_server(self, name: str, timeout: float = 120) -> None:
        """Ask the hub to stop ``name``'s server and wait until it has."""
        await self.call(f"/hub/api/users/{name}/server", method="DELETE")
        deadline = asyncio.get_running_loop().time() + timeout
        while (await self.call(f"/hub/api/users/{name}")).get("servers"):
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"the server of {name} did not stop")
            await asyncio.sleep(0.1)
