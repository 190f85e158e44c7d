"""The running Jupyter server the terminal client talks to: found, called, and its rooms joined.

The server is the one named by ``--url``/``--token`` (or ``JUPYTER_TOKEN``), else the one
Jupyter's runtime files list (as ``jupyter server list`` does) whose root holds the
notebook, else the first listed. Every request carries ``Authorization: token …``, so
JupyterHub tokens through its proxy work the same.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from ..keeper.registry import process_alive
from .failures import CliError, kind_of_http_status

# tornado's client, pycrdt and jupyter_ydoc are imported where used: ``jupyter loop --help``
# needs none of them, ``status`` no Y document (see ``bench/cli_startup.py``).
if TYPE_CHECKING:
    from jupyter_ydoc import YNotebook
    from tornado.httpclient import HTTPClientError


@dataclass(frozen=True)
class Server:
    """Where the server is: its URL (ending in its base URL and ``/``), token and root."""

    url: str
    token: str
    root_dir: str | None = None

    def api_url(self, *parts: str) -> str:
        return self.url + "/".join(quote(part, safe="/:") for part in parts)

    def notebook_path(self, notebook: str) -> str:
        """The server-relative path of ``notebook`` (a local path under the root works too).

        Example:
            >>> Server("http://h/", "t", "/srv/root").notebook_path("/srv/root/a/b.ipynb")
            'a/b.ipynb'
            >>> Server("http://h/", "t", None).notebook_path("a/b.ipynb")
            'a/b.ipynb'
        """
        if self.root_dir and os.path.isabs(notebook):
            relative = os.path.relpath(notebook, self.root_dir)
            if not relative.startswith(".."):
                return relative.replace(os.sep, "/")
        if self.root_dir and os.path.exists(notebook) and not os.path.isabs(notebook):
            relative = os.path.relpath(os.path.abspath(notebook), self.root_dir)
            if not relative.startswith(".."):
                return relative.replace(os.sep, "/")
        return notebook.lstrip("/")


def find_server(url: str | None, token: str | None, notebook: str | None = None) -> Server:
    """The server to talk to (see the module docstring)."""
    token = token if token is not None else os.environ.get("JUPYTER_TOKEN", "")
    if url:
        return Server(url if url.endswith("/") else url + "/", token)
    servers = running_servers()
    if not servers:
        raise CliError(
            "No running Jupyter server found; start one, or give --url and --token.",
            "no server",
        )
    chosen = servers[0]
    if notebook:
        target = Path(notebook).resolve()
        for info in servers:
            root = Path(info.get("root_dir") or "/").resolve()
            if target == root or root in target.parents:
                chosen = info
                break
    return Server(str(chosen["url"]), token or str(chosen.get("token", "")), chosen.get("root_dir"))


def running_servers() -> list[dict[str, Any]]:
    """The ``jpserver-*.json`` files of Jupyter's runtime directory whose process lives.

    What ``jupyter server list`` reads. Rejected: ``jupyter_server.serverapp``'s
    ``list_running_servers``, whose import (the whole server application, jupyter_events,
    jsonschema's URI checks) took most of the client's 3 s start. Unlike it, this one never
    deletes a stale file: a client reads, the servers own their files.
    """
    from jupyter_core.paths import jupyter_runtime_dir

    runtime = Path(jupyter_runtime_dir())
    servers = []
    for info_file in sorted(runtime.glob("jpserver-*.json")) if runtime.is_dir() else []:
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # being written, or gone since it was listed
        pid = info.get("pid") if isinstance(info, dict) else None
        if isinstance(pid, int) and process_alive(pid):
            servers.append(info)
    return servers


class Api:
    """JSON requests to the server; HTTP errors become one-line :class:`CliError`."""

    def __init__(self, server: Server) -> None:
        from tornado.httpclient import AsyncHTTPClient

        self.server = server
        self._client = AsyncHTTPClient()

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.server.token}"} if self.server.token else {}

    async def call(
        self, *parts: str, method: str = "GET", body: Any = None, query: str = ""
    ) -> Any:
        from tornado.httpclient import HTTPClientError, HTTPRequest

        url = self.server.api_url(*parts) + (f"?{query}" if query else "")
        request = HTTPRequest(
            url,
            method=method,
            body=None if body is None and method in ("GET", "DELETE") else json.dumps(body or {}),
            headers={**self.headers(), "Content-Type": "application/json"},
            request_timeout=120,
        )
        try:
            response = await self._client.fetch(request)
        except HTTPClientError as e:
            raise CliError(_http_message(e, url), kind_of_http_status(e.code)) from None
        except OSError as e:
            raise CliError(
                f"Cannot reach the server at {self.server.url}: {e} (is it running? "
                "`jupyter server list` shows the running ones)",
                "no server",
            ) from None
        return json.loads(response.body or b"null")

    @asynccontextmanager
    async def room(self, path: str) -> AsyncIterator[YNotebook]:
        """The notebook's shared document, synced with the server while inside."""
        from jupyter_ydoc import YNotebook
        from pycrdt import Provider
        from tornado.httpclient import HTTPRequest

        from .ychannel import TornadoChannel, connect_room

        await self.existing_notebook(path)
        session = await self.call(
            "api", "collaboration", "session", path, method="PUT",
            body={"format": "json", "type": "notebook"},
        )  # fmt: skip
        room = f"json:notebook:{session['fileId']}"
        parts = urlsplit(self.server.url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        url = f"{scheme}://{parts.netloc}{parts.path}api/collaboration/room/{room}"
        request = HTTPRequest(f"{url}?sessionId={session['sessionId']}", headers=self.headers())
        connection = await connect_room(request)
        notebook = YNotebook()
        try:
            async with Provider(notebook.ydoc, TornadoChannel(connection, room)):
                await synced(notebook)
                yield notebook
        finally:
            connection.close()

    async def existing_notebook(self, path: str) -> None:
        """Raise a "not found" :class:`CliError` unless the server has a notebook at ``path``.

        Asked before joining its room: the collaboration session of a missing file is
        granted, then its room's socket closes, which the client saw only as a
        ``WebSocketClosedError`` (``jupyter loop run nosuch.ipynb``).
        """
        try:
            model = await self.call("api", "contents", path, query="content=0")
        except CliError as e:
            if e.kind != "not found":
                raise
            raise CliError(
                f"No notebook '{path}' on the server at {self.server.url} (paths are "
                "relative to the directory the server serves; check the name).",
                "not found",
            ) from None
        if model.get("type") != "notebook":
            raise CliError(f"'{path}' is a {model.get('type')}, not a notebook.", "usage")


async def synced(notebook: YNotebook, timeout: float = 30.0) -> None:
    """Wait until the room has sent the document (it always holds the notebook metadata)."""
    import asyncio

    from pycrdt import Map

    deadline = asyncio.get_running_loop().time() + timeout
    while not len(notebook.ydoc.get("meta", type=Map)):
        if asyncio.get_running_loop().time() > deadline:
            raise CliError("The server never sent the notebook's shared document.", "no server")
        await asyncio.sleep(0.02)


def _http_message(error: HTTPClientError, url: str) -> str:
    message = ""
    if error.response is not None and error.response.body:
        try:
            message = str(json.loads(error.response.body).get("message") or "")
        except ValueError:
            message = ""
    if error.code == 403 and not message:
        message = "forbidden (is the token right?)"
    return f"{error.code} {message or error.message} ({url})"
