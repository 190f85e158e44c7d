"""A local kernel, reached over ZeroMQ from its connection info (see ``connection.link_to``).

``KernelManager.client()`` copies the manager's session, so its requests would share a
ZMQ identity with other clients of that session and replies would go to whichever client
reads first: runs hang. The client here is built from the connection info alone, with a
session of our own: the same for the kernel at every start of the server
(:mod:`.session`), so that a prompt of a run the previous server sent reaches the
server that follows the run again.

IOPub, where every output comes, is read as jupyter_server reads it for a tab's kernel
socket: a :class:`~zmq.eventloop.zmqstream.ZMQStream` hands each message over in the loop
callback that finds the socket readable. Rejected: awaiting ``get_iopub_msg`` (pyzmq's
asyncio poll, then its receive), which took a message three to four milliseconds after
jupyter_server's stream had it, in the same process (a turn of the loop per step, each
behind whatever else was ready): a cell's output reached the tabs that much later than
stock JupyterLab's. Shell and stdin stay awaited: requests are sent on those sockets, and
a stream that does not send them itself can miss what arrives meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from queue import Empty
from typing import Any

import zmq
from jupyter_client.session import Session
from jupyter_server.utils import ensure_async
from zmq.eventloop.zmqstream import ZMQStream

from ...errors import Unavailable
from ...tasks import succeeded
from .session import stable_session

Deliver = Callable[[str, dict[str, Any]], None]
"""Called with (channel name, message) for each message the kernel sends us."""

POLL_TIMEOUT = 1.0
"""Seconds a receive waits before polling again. pyzmq's asyncio poll without a timeout
can miss a message that arrives while a request is sent on the same socket (seen with a
second execute request sent while a reply was awaited: the reply never came), so no
receive waits for good."""

RESTART_POLL = 0.2
"""Seconds between looks at a dead kernel that its restarter is to bring back."""


class ZmqLink:
    """A local kernel, over ZeroMQ from its connection info."""

    def __init__(self, manager: Any, log: logging.Logger) -> None:
        self._manager = manager
        self._log = log
        self._client: Any = None
        self._iopub: ZMQStream | None = None

    @property
    def session(self) -> Session:
        session: Session = self._client.session
        return session

    async def open(self, timeout: float, *, busy: bool = False) -> None:
        """Connect to the kernel's ports as they are now.

        A cell may be run between a kernel's death and its restart by jupyter_client's
        restarter (seconds later, on new ports when it died young): the connection waits
        for the restarted kernel, and connects again when a restart changed the ports
        while it waited for an answer, rather than ask the old ports until it times out.
        """
        manager = self._manager
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            await _restarted(manager, deadline - loop.time(), timeout)
            ports = manager.get_connection_info(session=False)
            client = manager.client_factory(connection_file=manager.connection_file, parent=manager)
            client.load_connection_info(ports)
            client.session.session = stable_session(str(manager.kernel_id))
            client.start_channels(shell=True, iopub=True, stdin=True, hb=False, control=busy)
            if busy:
                self._client = client  # ready once IOPub answers (``KernelChannel._iopub_up``)
                return
            try:
                await client.wait_for_ready(timeout=max(deadline - loop.time(), 0))
            except (RuntimeError, TimeoutError) as e:
                client.stop_channels()
                moved = manager.get_connection_info(session=False) != ports
                dead = "died" in str(e)
                if (moved or dead) and loop.time() < deadline:
                    continue  # restarted meanwhile, or about to be: connect anew
                raise Unavailable(f"The kernel did not answer within {timeout:g} s: {e}") from e
            self._client = client
            return

    def send(self, channel: str, message: dict[str, Any]) -> None:
        getattr(self._client, f"{channel}_channel").send(message)

    async def receive(self, deliver: Deliver) -> None:
        client = self._client
        self._iopub = self._read_iopub(deliver)
        try:
            await asyncio.gather(
                self._pump("shell", client.get_shell_msg, deliver),
                self._pump("stdin", client.get_stdin_msg, deliver),
            )
        finally:
            self._stop_iopub()

    def _read_iopub(self, deliver: Deliver) -> ZMQStream:
        """Deliver each IOPub message from the callback that reads it. The client's own
        IOPub channel is no longer read (its socket is the one read here)."""
        session = self._client.session
        socket = zmq.Socket(shadow=self._client.iopub_channel.socket.underlying)
        stream = ZMQStream(socket)

        def received(frames: list[bytes]) -> None:
            try:
                _, parts = session.feed_identities(frames)
                message = session.deserialize(parts)
            except Exception as e:  # a message that is not the kernel's: not for us
                self._log.warning("jupyter-loop ignores an IOPub message it cannot read: %s", e)
                return
            deliver("iopub", message)

        stream.on_recv(received)
        return stream

    def _stop_iopub(self) -> None:
        """Stop reading IOPub; the socket stays the client's (``stop_channels`` closes it)."""
        stream, self._iopub = self._iopub, None
        if stream is not None and not stream.closed():
            stream.stop_on_recv()
            stream.io_loop.remove_handler(stream.socket)
            stream.socket = None  # type: ignore[assignment]  # closed: a late callback returns

    async def _pump(
        self, channel: str, get: Callable[..., Awaitable[dict[str, Any]]], deliver: Deliver
    ) -> None:
        while True:
            try:
                message = await get(timeout=POLL_TIMEOUT)
            except Empty:
                continue
            except asyncio.CancelledError:
                raise
            except Exception:
                self._log.debug("jupyter-loop kernel channel closed", exc_info=True)
                return
            if channel == "stdin":
                self._iopub_caught_up()
            deliver(channel, message)

    def _iopub_caught_up(self) -> None:
        """Hand over the IOPub messages already here before an input request.

        ipykernel flushes IOPub before it asks for input, but each socket is read on its
        own: without this, the prompt could reach the document ahead of the outputs
        printed above it. (A gateway sends every channel down one websocket, in order.)
        """
        stream = self._iopub
        if stream is not None and not stream.closed():
            stream.flush(zmq.POLLIN)

    async def alive(self) -> bool:
        return bool(await ensure_async(self._manager.is_alive()))

    async def close(self) -> None:
        self._stop_iopub()
        if self._client is not None:
            self._client.stop_channels()
            self._client = None


async def _started(manager: Any, timeout: float) -> None:
    """Wait for a local kernel still starting (a pending kernel is listed before it runs)."""
    starting = getattr(manager, "ready", None)
    if isinstance(starting, asyncio.Future) and not succeeded(starting):
        try:
            await asyncio.wait_for(asyncio.shield(starting), timeout)
        except asyncio.TimeoutError as e:
            raise Unavailable(f"The kernel did not start within {timeout:g} s.") from e
        except Exception as e:
            raise Unavailable(f"The kernel failed to start: {str(e) or type(e).__name__}") from e


async def _restarted(manager: Any, remaining: float, timeout: float) -> None:
    """Wait for a kernel found dead to be running again, if a restarter brings it back."""
    await _started(manager, max(remaining, 0))
    if await ensure_async(manager.is_alive()):
        return
    if not getattr(manager, "autorestart", False):
        raise Unavailable("The kernel is not running (it died, and nothing restarts it).")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + remaining
    while not await ensure_async(manager.is_alive()):
        if loop.time() >= deadline:
            raise Unavailable(f"The kernel died and was not restarted within {timeout:g} s.")
        await asyncio.sleep(RESTART_POLL)
        await _started(manager, max(deadline - loop.time(), 0))
