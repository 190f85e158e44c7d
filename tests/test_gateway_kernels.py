"""Cells on remote kernels: a real Jupyter Kernel Gateway behind a real Jupyter server.

The server is started with ``GatewayClient.url`` (``--gateway-url``), so its kernels live
in the gateway and are reached over a websocket, with no ZeroMQ connection info at all.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from conftest import wait_for
from gateway_fixtures import jp_server_config, kernel_gateway  # noqa: F401 (fixtures)
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from test_execution_service import counted, counting, finished


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
