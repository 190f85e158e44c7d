"""pycrdt's ``Channel`` over a tornado websocket client: the terminal client's Y client.

Tests and benchmarks follow a notebook through it too (``tests/yclient.py``,
``testing/server_process.py``): one channel, so they sync as ``jupyter loop`` does.
"""

from __future__ import annotations

from tornado.websocket import WebSocketClientConnection


class TornadoChannel:
    """pycrdt's ``Channel`` over a tornado websocket client connection."""

    def __init__(self, connection: WebSocketClientConnection, path: str) -> None:
        self._connection = connection
        self._path = path

    @property
    def path(self) -> str:
        return self._path

    def __aiter__(self) -> TornadoChannel:
        return self

    async def __anext__(self) -> bytes:
        message = await self._connection.read_message()
        if message is None:
            raise StopAsyncIteration
        return message if isinstance(message, bytes) else message.encode()

    async def send(self, message: bytes) -> None:
        await self._connection.write_message(message, binary=True)

    async def recv(self) -> bytes:
        return await self.__anext__()

    def close(self) -> None:
        """Close the websocket, as a tab that is closed does."""
        self._connection.close()
