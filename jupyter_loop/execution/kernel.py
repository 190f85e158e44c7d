"""A kernel connection of our own, routing replies to the run that asked for them.

How the kernel is reached depends on where it runs, and :func:`link_to` alone decides:

- a local kernel (:class:`ZmqLink`): ``KernelManager.client()`` copies the manager's
  session, so its requests would share a ZMQ identity with other clients of that session
  and replies would go to whichever client reads first: runs hang. We build the client
  from the connection info alone, with a session of our own: the same for the kernel at
  every start of the server (:mod:`.kernel_session`), so that a prompt of a run the
  previous server sent reaches the server that follows the run again.
- a kernel on a kernel gateway (:class:`~.gateway_link.GatewayLink`): no connection info,
  one websocket of our own to the gateway.

Either way :class:`KernelChannel` sends the same messages and routes what comes back by
parent message id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from queue import Empty
from typing import Any, Protocol

from jupyter_client.session import Session
from jupyter_server.gateway.managers import GatewayKernelManager
from jupyter_server.utils import ensure_async

from ..errors import Unavailable
from ..tasks import succeeded
from .gateway_link import GatewayLink
from .kernel_session import stable_session

POLL_TIMEOUT = 1.0
"""Seconds a receive waits before polling again. pyzmq's asyncio poll without a timeout
can miss a message that arrives while a request is sent on the same socket (seen with a
second execute request sent while a reply was awaited: the reply never came), so no
receive waits for good."""

RESTART_POLL = 0.2
"""Seconds between looks at a dead kernel that its restarter is to bring back."""

IOPUB_PROBE = 0.5
"""Seconds to wait for the status of one IOPub probe before sending another."""

IOPUB_CATCH_UP_TURNS = 1000
"""Event-loop turns an input request waits at most for IOPub messages sent before it."""


class RunListener(Protocol):
    """Receives the messages that answer one execute request."""

    def on_iopub(self, message: dict[str, Any]) -> None: ...

    def on_reply(self, message: dict[str, Any]) -> None: ...

    def on_input_request(self, message: dict[str, Any]) -> None: ...


Deliver = Callable[[str, dict[str, Any]], None]
"""Called with (channel name, message) for each message the kernel sends us."""


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


class ZmqLink:
    """A local kernel, over ZeroMQ from its connection info."""

    def __init__(self, manager: Any, log: logging.Logger) -> None:
        self._manager = manager
        self._log = log
        self._client: Any = None

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
        await asyncio.gather(
            self._pump("iopub", client.get_iopub_msg, deliver),
            self._pump("shell", client.get_shell_msg, deliver),
            self._pump("stdin", client.get_stdin_msg, deliver),
        )

    async def _pump(
        self, channel: str, get: Callable[..., Awaitable[dict[str, Any]]], deliver: Deliver
    ) -> None:
        while True:
            try:
                message = await get(timeout=POLL_TIMEOUT)
                if channel == "stdin":
                    await self._iopub_caught_up()
            except Empty:
                continue
            except asyncio.CancelledError:
                raise
            except Exception:
                self._log.debug("jupyter-loop kernel channel closed", exc_info=True)
                return
            deliver(channel, message)

    async def _iopub_caught_up(self) -> None:
        """Let the IOPub pump take what the kernel sent before asking for input.

        ipykernel flushes IOPub before an input request, but the sockets are read by
        separate tasks: without this, the prompt could reach the document ahead of the
        outputs printed above it. Bounded, for a thread printing while input waits.
        (A gateway sends every channel down one websocket, in order.)
        """
        channel = self._client.iopub_channel
        for _ in range(IOPUB_CATCH_UP_TURNS):
            if not await channel.msg_ready():
                break
            await asyncio.sleep(0)
        await asyncio.sleep(0)  # the last message read is handed over on the next turn

    async def alive(self) -> bool:
        return bool(await ensure_async(self._manager.is_alive()))

    async def close(self) -> None:
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
        gets messages (a kept kernel's run is followed again, see ``kept``)."""
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
