"""Smoke test behind JupyterHub: a single-user server under ``/user/NAME/``.

A real hub (DummyAuthenticator, SimpleLocalProcessSpawner, configurable-http-proxy)
spawns ``jupyterhub-singleuser`` with jupyter-loop; a chatty cell, asked for on the
runs socket as a tab asks, runs through the proxy with a hub token and no client
connected.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_loop.execution.outputs.budget import METADATA_KEY
from jupyter_loop.testing.hub_process import TOKEN, HubProcess
from jupyter_loop.testing.server_process import ask_run_socket

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("configurable-http-proxy") is None,
        reason="configurable-http-proxy is not on PATH (scripts/test installs it from npm)",
    ),
]

NAME = "ada"
CHATTY = "import time\nfor i in range(300):\n    print('line', i, flush=True)\n    time.sleep(0.01)"
HUGE = "for i in range(20000):\n    print('huge', i)"
BUDGET = 16_000  # bytes a cell keeps in the notebook: the huge cell goes over, the chatty one not


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    process = HubProcess(
        tmp_path,
        [
            "--YDocExtension.document_save_delay=0.5",
            "--JupyterLoopApp.save_interval=0.5",
            f"--JupyterLoopApp.output_budget_bytes={BUDGET}",
        ],
    )
    process.start()
    yield process
    process.stop()


@pytest.mark.timeout(300)
async def test_a_chatty_run_behind_the_hub_is_saved_whole_with_user_links(hub: HubProcess):
    await hub.ready()
    base = await hub.spawn(NAME)
    assert base == f"/user/{NAME}/"
    path = "chatty.ipynb"
    content = json.loads(notebook_json(CHATTY, HUGE))
    model = {"type": "notebook", "format": "json", "content": content}
    await hub.call(f"{base}api/contents/{path}", method="PUT", body=model)
    session = {"path": path, "type": "notebook", "name": "", "kernel": {"name": "python3"}}
    await hub.call(f"{base}api/sessions", method="POST", body=session)
    # As a tab behind the hub sends it: on the runs socket, through the proxy.
    url = f"{hub.url.replace('http', 'ws', 1)}{base}api/jupyter-loop/runs/socket"
    socket = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {TOKEN}"}))
    await ask_run_socket(socket, {"path": path, "cell_ids": ["c0", "c1"]})
    socket.close()

    async def saved() -> list[dict[str, Any]]:
        while True:
            # Read while the run saves: a save renames a whole file into place, so every
            # read succeeds (tests/server/test_saves.py).
            model = await hub.call(f"{base}api/contents/{path}")
            cells: list[dict[str, Any]] = model["content"]["cells"]
            if all(cell.get("execution_count") for cell in cells):
                return cells
            await asyncio.sleep(0.5)

    chatty, huge = await asyncio.wait_for(saved(), timeout=120)
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
