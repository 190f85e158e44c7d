"""A kernel reached through a kernel gateway (``--gateway-url``): one websocket of our own.

A gateway kernel has no ZeroMQ connection info. Jupyter's ``GatewayKernelClient`` would
reach it, but it opens its websocket with a blocking call, reads it on a thread, and its
``get_msg`` polls with ``asyncio.sleep(0)`` (a busy loop per channel while idle). So we
open our own websocket to the gateway's ``/api/kernels/<id>/channels``, as Jupyter's
``GatewayWebSocketConnection`` does for a browser: JSON messages tagged with their channel.

The gateway gives every websocket its own ZeroMQ sockets on the kernel, so shell replies
and input requests come back on the websocket that sent the request, never on a browser's.

Our session id is the same for a kernel from one server start to the next
(:mod:`.session`): when the last websocket of a kernel closes, the gateway (it runs
jupyter_server's kernel manager) keeps the kernel's messages for that websocket's session
and hands them to the next websocket of the same session. So what a cell printed while
no server was up reaches the server that comes back (see ``durability.gateway_rejoin``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session
from jupyter_server.gateway.gateway_client import GatewayClient
from jupyter_server.services.kernels.connection.base import deserialize_binary_message
from jupyter_server.utils import url_escape, url_path_join
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from ...errors import Unavailable
from .session import stable_session


class GatewayLink:
    """Shell, IOPub and stdin of a gateway kernel over one websocket."""

    def __init__(self, manager: Any, log: logging.Logger) -> None:
        self._manager = manager  # a GatewayKernelManager
        self._kernel_id = str(manager.kernel_id)
        self._log = log
        self.session = Session(username="jupyter-loop", session=stable_session(self._kernel_id))
        self._socket: WebSocketClientConnection | None = None
        self._closed = False  # by the gateway

    async def open(self, timeout: float, *, busy: bool = False) -> None:
        gateway = GatewayClient.instance()
        url = url_path_join(
            gateway.ws_url or "", gateway.kernels_endpoint, url_escape(self._kernel_id), "channels"
        )
        # The gateway keys what it keeps for a closed websocket by this session id.
        url += "?" + urlencode({"session_id": self.session.session})
        request = HTTPRequest(url, **gateway.load_connection_args())
        self._closed = False
        try:
            self._socket = await asyncio.wait_for(websocket_connect(request), timeout)
        except Exception as e:
            reason = str(e) or type(e).__name__
            raise Unavailable(f"The kernel gateway did not connect this kernel: {reason}") from e

    def send(self, channel: str, message: dict[str, Any]) -> None:
        assert self._socket is not None, "send before open"
        self._socket.write_message(
            json.dumps({**message, "channel": channel}, default=json_default)
        )

    async def receive(self, deliver: Callable[[str, dict[str, Any]], None]) -> None:
        """Hand each message to ``deliver(channel, message)`` until the websocket closes."""
        assert self._socket is not None, "receive before open"
        while True:
            raw = await self._socket.read_message()
            if raw is None:
                self._closed = True
                self._log.info("jupyter-loop: the gateway closed kernel %s", self._kernel_id)
                return
            message = deserialize_binary_message(raw) if isinstance(raw, bytes) else json.loads(raw)
            deliver(str(message.pop("channel", "")), message)

    async def alive(self) -> bool:
        # A kernel that died is restarted by the gateway, which says so on IOPub (see
        # KernelChannel). One shut down or culled there keeps our websocket open: ask.
        if self._socket is None or self._closed:
            return False
        try:
            return bool(await self._manager.is_alive())
        except Exception as e:
            self._log.warning(
                "jupyter-loop: the gateway did not answer for kernel %s: %s", self._kernel_id, e
            )
            return False

    async def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
