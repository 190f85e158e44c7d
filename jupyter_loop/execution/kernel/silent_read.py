"""Silent requests to one kernel (the variables snippet): at most one in the kernel at a time.

A kernel answers its shell requests in order, so every request sent while one is still being
answered waits behind it, and so does the next cell. A caller that stops waiting (a
completion gives the variables 0.3 s) does not take its request back: the kernel answers it
anyway. Sending one request per caller therefore let requests pile up in the kernel when
reading was slow, and a trivial cell then waited seconds behind them (issue 18). So a read
lasts from its send until the kernel's reply, whoever still waits for it; a caller asking
for the same expressions meanwhile waits for that reply instead of sending another, and the
kernel counts as busy (:attr:`SilentReads.reading`).

Refusing a second caller outright was the alternative: simpler, but two clients asking at
once (a completion and the assistant) would then see "busy" for a kernel that is idle.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ...errors import Conflict, Unavailable


class ReplyWaiter:
    """A kernel-channel listener that waits for the shell reply only (IOPub is ignored)."""

    def __init__(self) -> None:
        self.reply: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def on_iopub(self, message: dict[str, Any]) -> None:
        pass  # a silent request publishes nothing but busy/idle

    def on_reply(self, message: dict[str, Any]) -> None:
        if not self.reply.done():
            self.reply.set_result(message.get("content") or {})

    def on_input_request(self, message: dict[str, Any]) -> None:
        pass  # sent with allow_stdin=False: never asked


class SilentChannel(Protocol):
    """What a silent request needs of a kernel connection (``connection.KernelChannel``)."""

    def evaluate(self, expressions: dict[str, str], listener: ReplyWaiter) -> str: ...

    def release(self, msg_id: str) -> None: ...


class SilentReads:
    """The silent request of one kernel in flight, from its send to its reply."""

    def __init__(self) -> None:
        self._in_flight: asyncio.Task[dict[str, Any]] | None = None
        self._expressions: dict[str, str] = {}
        self.sent = 0
        """Requests sent to the kernel (for tests and benchmarks)."""

    @property
    def reading(self) -> bool:
        """A request is in the kernel, or on its way there: the kernel is busy with it."""
        return self._in_flight is not None and not self._in_flight.done()

    async def read(
        self,
        channel: SilentChannel,
        connect: Callable[[], Awaitable[None]],
        expressions: dict[str, str],
        timeout: float,
    ) -> dict[str, Any]:
        """The content of the reply to a silent request for ``expressions``: the one in
        flight if it asks for the same, else a new one.

        ``timeout`` covers connecting too: a kernel that is still starting, or dead, makes
        the caller wait no longer than one that is busy. The request stays in flight after
        a time-out, until the kernel answers.

        Raises:
            Conflict: Another request (for other expressions) is in flight.
            Unavailable: No reply within ``timeout``, or no connection.
        """
        if not self.reading:
            self._expressions = dict(expressions)
            self._in_flight = asyncio.ensure_future(self._ask(channel, connect, expressions))
            self._in_flight.add_done_callback(_retrieved)
            self.sent += 1
        elif expressions != self._expressions:
            raise Conflict("The kernel is busy answering another silent request.")
        assert self._in_flight is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._in_flight), timeout)
        except asyncio.TimeoutError:
            raise Unavailable(
                f"The kernel did not answer within {timeout:g} s (still starting, or busy "
                "with code run from elsewhere)."
            ) from None

    async def _ask(
        self,
        channel: SilentChannel,
        connect: Callable[[], Awaitable[None]],
        expressions: dict[str, str],
    ) -> dict[str, Any]:
        await connect()
        waiter = ReplyWaiter()
        msg_id = channel.evaluate(expressions, waiter)
        try:
            return await waiter.reply
        finally:
            channel.release(msg_id)

    def forget(self) -> None:
        """The kernel restarted, died or is closed: no reply will come."""
        if self._in_flight is not None and not self._in_flight.done():
            self._in_flight.cancel()
        self._in_flight = None


def _retrieved(task: asyncio.Task[dict[str, Any]]) -> None:
    """Nobody may be waiting any more when a request fails: its error is read here."""
    with contextlib.suppress(asyncio.CancelledError):
        task.exception()
