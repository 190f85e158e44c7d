"""pycrdt's ``Channel`` over a tornado websocket client: the terminal client's Y client.

Tests and benchmarks follow a notebook through it too (``tests/yclient.py``,
``testing/server_process.py``): one channel, so they sync as ``jupyter loop`` does.
"""

from __future__ import annotations

import asyncio

from pycrdt import YMessageType, YSyncMessageType
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, WebSocketClosedError, websocket_connect

_SYNC_STEP2 = bytes([YMessageType.SYNC, YSyncMessageType.SYNC_STEP2])

ROOM_MESSAGE_LIMIT = 1 << 31
"""The largest message a room may send us. Its answer to a joining client is the whole
notebook in one message (15 MB at 40,000 one-line cells); tornado's client refuses more
than 10 MiB by default and closes the connection, and the client then waited for a
notebook that never came. A browser sets no limit; this one is only the size of a
websocket frame's length that tornado reads."""


async def connect_room(request: HTTPRequest) -> WebSocketClientConnection:
    """A websocket to a room (``request``'s URL), taking the room's messages whatever
    their size (``ROOM_MESSAGE_LIMIT``)."""
    return await websocket_connect(request, max_message_size=ROOM_MESSAGE_LIMIT)


class TornadoChannel:
    """pycrdt's ``Channel`` over a tornado websocket client connection."""

    def __init__(self, connection: WebSocketClientConnection, path: str) -> None:
        self._connection = connection
        self._path = path
        self._sent_step2 = asyncio.Event()
        self._got_step2 = asyncio.Event()

    async def exchanged(self) -> None:
        """Return once each side has sent the other what it lacked (a sync step 2 each
        way): a document that comes back with edits made offline has sent them."""
        await self._sent_step2.wait()
        await self._got_step2.wait()

    @property
    def path(self) -> str:
        return self._path

    def __aiter__(self) -> TornadoChannel:
        return self

    async def __anext__(self) -> bytes:
        message = await self._connection.read_message()
        if message is None:
            raise StopAsyncIteration
        message = message if isinstance(message, bytes) else message.encode()
        if message.startswith(_SYNC_STEP2):
            self._got_step2.set()
        return message

    async def send(self, message: bytes) -> None:
        await self._connection.write_message(message, binary=True)
        if message.startswith(_SYNC_STEP2):
            self._sent_step2.set()

    async def recv(self) -> bytes:
        return await self.__anext__()

    def close(self) -> None:
        """Close the websocket, as a tab that is closed does."""
        self._connection.close()


class TabChannel(TornadoChannel):
    """The channel as a browser tab's y-websocket provider behaves: while its socket is
    closed it sends nothing, and the server's updates stop coming, so the tab's provider
    ends quietly. Tests follow a notebook through it across a server's SIGKILL, as a tab
    does; the terminal client keeps :class:`TornadoChannel`, whose closed-socket error it
    turns into "the server closed the connection" (``cli/failures.py``)."""

    async def send(self, message: bytes) -> None:
        try:
            await super().send(message)
        except WebSocketClosedError:
            pass
