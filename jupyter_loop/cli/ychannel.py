"""pycrdt's ``Channel`` over a tornado websocket client: the terminal client's Y client.

Tests and benchmarks follow a notebook through it too (``tests/yclient.py``,
``testing/server_process.py``): one channel, so they sync as ``jupyter loop`` does.
"""

from __future__ import annotations

import asyncio

from pycrdt import YMessageType, YSyncMessageType
from tornado.websocket import WebSocketClientConnection

_SYNC_STEP2 = bytes([YMessageType.SYNC, YSyncMessageType.SYNC_STEP2])


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
