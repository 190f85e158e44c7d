"""A kernel connection of our own, routing replies to the run that asked for them.

``KernelManager.client()`` copies the manager's session, so its requests share a ZMQ
identity with other clients of that session and replies go to whichever client reads
first: runs hang. We build the client from the connection info alone, which gives it
a fresh session.
"""

from __future__ import annotations

import asyncio
import logging
import queue
from typing import Any, Protocol

from ..errors import Unavailable
from ..tasks import succeeded

# Loop turns an input request waits at most for the IOPub messages sent before it.
_IOPUB_CATCH_UP_TURNS = 1000


class RunListener(Protocol):
    """Receives the messages that answer one execute request."""

    def on_iopub(self, message: dict[str, Any]) -> None: ...

    def on_reply(self, message: dict[str, Any]) -> None: ...

    def on_input_request(self, message: dict[str, Any]) -> None: ...


class KernelChannel:
    """Shell, IOPub and stdin of one kernel, multiplexed by parent message id."""

    def __init__(self, kernel_manager: Any, log: logging.Logger) -> None:
        self._manager = kernel_manager
        self._log = log
        self._client: Any = None
        self._listeners: dict[str, RunListener] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._ready: asyncio.Future[None] | None = None

    async def ready(self, timeout: float) -> None:
        """Connect (once) and wait until the kernel answers; raise if it does not."""
        if self._ready is None:
            self._ready = asyncio.ensure_future(self._connect(timeout))
        elif succeeded(self._ready):
            return  # connected: no trip through the event loop before a cell's execute
        try:
            await asyncio.shield(self._ready)
        except Exception:
            self._ready = None
            raise

    async def _connect(self, timeout: float) -> None:
        manager = self._manager
        client = manager.client_factory(connection_file=manager.connection_file, parent=manager)
        client.load_connection_info(manager.get_connection_info(session=False))
        client.start_channels(shell=True, iopub=True, stdin=True, hb=False, control=False)
        try:
            await client.wait_for_ready(timeout=timeout)
        except (RuntimeError, TimeoutError) as e:
            client.stop_channels()
            raise Unavailable(f"The kernel did not answer within {timeout:g} s: {e}") from e
        self._client = client
        self._tasks = [
            asyncio.ensure_future(self._route(client.get_iopub_msg, "on_iopub")),
            asyncio.ensure_future(self._route(client.get_shell_msg, "on_reply")),
            asyncio.ensure_future(self._route(client.get_stdin_msg, "on_input_request")),
        ]

    async def _route(self, receive: Any, method: str) -> None:
        while True:
            try:
                message = await receive()
                if method == "on_input_request":
                    await self._iopub_caught_up()
            except asyncio.CancelledError:
                raise
            except Exception:
                self._log.debug("jupyter-loop kernel channel closed", exc_info=True)
                return
            parent = (message.get("parent_header") or {}).get("msg_id")
            listener = self._listeners.get(parent) if parent else None
            if listener is None:
                continue
            try:
                getattr(listener, method)(message)
            except Exception:
                self._log.exception("jupyter-loop failed to handle a %s message", method)

    async def _iopub_caught_up(self) -> None:
        """Let the IOPub task take what the kernel sent before asking for input.

        ipykernel flushes IOPub before an input request, but the sockets are read by
        separate tasks: without this, the prompt could reach the document ahead of the
        outputs printed above it. Bounded, for a thread printing while input waits.
        """
        channel = self._client.iopub_channel
        for _ in range(_IOPUB_CATCH_UP_TURNS):
            if not await _message_waiting(channel):
                break
            await asyncio.sleep(0)
        await asyncio.sleep(0)  # the last message read is handed over on the next turn

    def execute(self, code: str, listener: RunListener) -> str:
        """Send an execute request; ``listener`` receives everything that answers it."""
        msg_id: str = self._client.execute(
            code, silent=False, store_history=True, allow_stdin=True, stop_on_error=True
        )
        self._listeners[msg_id] = listener
        return msg_id

    def send_input(self, value: str, parent: dict[str, Any]) -> None:
        content = {"value": value}
        message = self._client.session.msg("input_reply", content, parent=parent)
        self._client.stdin_channel.send(message)

    def release(self, msg_id: str) -> None:
        self._listeners.pop(msg_id, None)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2)
        self._tasks = []
        if self._client is not None:
            self._client.stop_channels()
            self._client = None
        self._listeners.clear()
        self._ready = None


async def _message_waiting(channel: Any) -> bool:
    """Whether a message already received waits on a kernel client's channel."""
    if isinstance(channel, queue.Queue):  # a gateway kernel's, fed from its websocket
        return not channel.empty()
    return bool(await channel.msg_ready())  # a ZMQ socket's
