"""A kernel connection of our own, routing replies to the run that asked for them.

How the kernel is reached depends on where it runs, and :func:`link_to` alone decides:

- a local kernel (:class:`~.zmq_link.ZmqLink`): ZeroMQ from its connection info, with a
  session of our own;
- a kernel on a kernel gateway (:class:`~.gateway_link.GatewayLink`): no connection info,
  one websocket of our own to the gateway.

Either way :class:`KernelChannel` sends the same messages and routes what comes back by
parent message id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from jupyter_client.session import Session
from jupyter_server.gateway.managers import GatewayKernelManager

from ...errors import Unavailable
from ...tasks import succeeded
from .gateway_link import GatewayLink
from .zmq_link import Deliver, ZmqLink

IOPUB_PROBE = 0.5
"""Seconds to wait for the status of one IOPub probe before sending another."""


class RunListener(Protocol):
    """Receives the messages that answer one execute request."""

    def on_iopub(self, message: dict[str, Any]) -> None: ...

    def on_reply(self, message: dict[str, Any]) -> None: ...

    def on_input_request(self, message: dict[str, Any]) -> None: ...


class KernelLink(Protocol):
    """One client connection to one kernel: shell, IOPub and stdin."""

    @property
    def session(self) -> Session: ...

    async def open(self, timeout: float, *, busy: bool = False) -> None:
        """Connect; raise :class:`Unavailable` saying why if the kernel cannot be reached.

        ``busy``: the kernel may be running a cell (one a previous server sent): do not
        wait for a shell reply, which would come only once that cell ends."""

    def send(self, channel: str, message: dict[str, Any]) -> None: ...

    async def receive(self, deliver: Deliver) -> None:
        """Deliver every message until the connection closes."""

    async def alive(self) -> bool: ...

    async def close(self) -> None: ...


def link_to(manager: Any, log: logging.Logger) -> KernelLink:
    """How to reach the kernel ``manager`` manages (the one place that decides)."""
    if isinstance(manager, GatewayKernelManager):
        return GatewayLink(manager, log)
    return ZmqLink(manager, log)


LOST_STATES = frozenset({"restarting", "dead"})
"""Kernel states a gateway announces on IOPub when its kernel died (restarted, or not)."""


class KernelChannel:
    """Shell, IOPub and stdin of one kernel, multiplexed by parent message id."""

    def __init__(
        self, kernel_manager: Any, log: logging.Logger, on_lost: Callable[[str], None]
    ) -> None:
        self._link = link_to(kernel_manager, log)
        self._log = log
        self._on_lost = on_lost
        self._listeners: dict[str, RunListener] = {}
        self._reader: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._markers: dict[str, asyncio.Future[None]] = {}  # see ``_iopub_up``

    @property
    def connected(self) -> bool:
        return self._ready is not None and succeeded(self._ready)

    async def ready(self, timeout: float, *, busy: bool = False) -> None:
        """Connect (once) and wait until the kernel answers; raise if it does not.

        ``busy``: the kernel may be running a cell; ready once our IOPub subscription
        gets messages (a kept kernel's run is followed again, see ``durability.kept_runs``)."""
        if self._ready is None:
            self._ready = asyncio.ensure_future(self._connect(timeout, busy))
        elif succeeded(self._ready):
            return  # connected: no trip through the event loop before a cell's execute
        try:
            await asyncio.shield(self._ready)
        except Exception:
            self._ready = None
            raise

    async def _connect(self, timeout: float, busy: bool = False) -> None:
        await self._link.open(timeout, busy=busy)
        self._reader = asyncio.ensure_future(self._link.receive(self._deliver))
        self._reader.add_done_callback(self._disconnected)
        if busy:
            await self._iopub_up(timeout)

    async def _iopub_up(self, timeout: float) -> None:
        """Wait until IOPub delivers to us: the kernel publishes a status for each control
        request, answered even while a cell runs. A subscription connects in the
        background, so the request is sent again until one status arrives."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            message = self._link.session.msg("kernel_info_request", {})
            marker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._markers[str(message["header"]["msg_id"])] = marker
            self._link.send("control", message)
            try:
                await asyncio.wait_for(marker, IOPUB_PROBE)
                return
            except asyncio.TimeoutError:
                continue
            finally:
                self._markers.clear()
        raise Unavailable(f"The kernel's output did not reach the server within {timeout:g} s.")

    def _disconnected(self, reader: asyncio.Task[None]) -> None:
        # The connection closed under us (a gateway restarted, the network): the next
        # run connects again; a running cell learns it from the liveness check.
        if reader is self._reader and not reader.cancelled():
            self._ready = None

    def _deliver(self, channel: str, message: dict[str, Any]) -> None:
        if channel == "iopub" and message["header"]["msg_type"] == "status":
            state = message["content"].get("execution_state")
            if state in LOST_STATES:
                self._on_lost(state)
        parent = (message.get("parent_header") or {}).get("msg_id")
        marker = self._markers.get(parent) if parent and channel == "iopub" else None
        if marker is not None and not marker.done():
            marker.set_result(None)
        listener = self._listeners.get(parent) if parent else None
        if listener is None:
            return
        try:
            if channel == "iopub":
                listener.on_iopub(message)
            elif channel == "shell":
                listener.on_reply(message)
            elif channel == "stdin":
                listener.on_input_request(message)
        except Exception:
            self._log.exception("jupyter-loop failed to handle a %s message", channel)

    def execute(self, code: str, listener: RunListener) -> str:
        """Send an execute request; ``listener`` receives everything that answers it."""
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": True,
            "stop_on_error": True,
        }
        return self._request(content, listener)

    def evaluate(self, expressions: dict[str, str], listener: RunListener) -> str:
        """Evaluate ``user_expressions`` silently: no history, no execution count, no output."""
        content = {
            "code": "",
            "silent": True,
            "store_history": False,
            "user_expressions": expressions,
            "allow_stdin": False,
            "stop_on_error": False,
        }
        return self._request(content, listener)

    def _request(self, content: dict[str, Any], listener: RunListener) -> str:
        message = self._link.session.msg("execute_request", content)
        msg_id = str(message["header"]["msg_id"])
        self._listeners[msg_id] = listener
        self._link.send("shell", message)
        return msg_id

    def follow(self, msg_id: str, listener: RunListener) -> None:
        """Route what answers a request sent by someone else (a previous server) to
        ``listener``."""
        self._listeners[msg_id] = listener

    def send_input(self, value: str, parent: dict[str, Any]) -> None:
        message = self._link.session.msg("input_reply", {"value": value}, parent=parent)
        self._link.send("stdin", message)

    async def alive(self) -> bool:
        return await self._link.alive()

    def release(self, msg_id: str) -> None:
        self._listeners.pop(msg_id, None)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.wait({self._reader}, timeout=2)
            self._reader = None
        await self._link.close()
        self._listeners.clear()
        self._ready = None
