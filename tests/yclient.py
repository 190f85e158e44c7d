"""A real Y client joined to a notebook's room over the server's websocket: a stand-in tab."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import (
    Awareness,
    Map,
    Provider,
    YMessageType,
    create_awareness_message,
    read_message,
)
from tornado.httpclient import HTTPRequest

from jupyter_loop.cli.ychannel import TornadoChannel, connect_room
from jupyter_loop.document import NotebookRef
from jupyter_loop.records import AGENT_FIELD


class Tab:
    """What one browser tab sees of a notebook."""

    def __init__(
        self, notebook: YNotebook, connection: Any = None, awareness: Awareness | None = None
    ) -> None:
        self.notebook = notebook
        self._connection = connection
        self._awareness = awareness or Awareness(notebook.ydoc)

    def agents(self) -> list[tuple[str, dict[str, Any]]]:
        """The agents at work the tab is shown: name, and what they do to which cell."""
        return [
            (state["user"]["name"], state[AGENT_FIELD])
            for state in self._awareness.states.values()
            if state and AGENT_FIELD in state
        ]

    async def say(self, state: dict[str, Any] | None) -> None:
        """Publish the tab's awareness state (``None``: it leaves, as a closing tab says),
        as a browser's provider does."""
        self._awareness.set_local_state(state)
        update = self._awareness.encode_awareness_update([self._awareness.client_id])
        await self._connection.write_message(create_awareness_message(update), binary=True)

    def cell(self, cell_id: str) -> dict[str, Any]:
        for ycell in self.notebook.ycells:
            if ycell.get("id") == cell_id:
                return ycell.to_py() or {}
        raise KeyError(cell_id)

    def text(self, cell_id: str) -> str:
        """All stream text of a cell, as the tab renders it."""
        outputs = self.cell(cell_id).get("outputs") or []
        return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")

    def marker(self, cell_id: str) -> dict[str, Any] | None:
        board = self.notebook.ydoc.get("jupyter_loop:execution", type=Map)
        value = board.get(cell_id)
        return dict(value) if isinstance(value, dict) else None


class AwareChannel(TornadoChannel):
    """The channel of a tab that also hears the room's awareness, as a browser's provider
    does (pycrdt's ``Provider`` syncs the document only)."""

    def __init__(self, connection: Any, path: str, awareness: Awareness) -> None:
        super().__init__(connection, path)
        self._awareness = awareness

    async def __anext__(self) -> bytes:
        message = await super().__anext__()
        if message and message[0] == YMessageType.AWARENESS:
            self._awareness.apply_awareness_update(read_message(message[1:]), "remote")
        return message


async def _synced(notebook: YNotebook, timeout: float = 20.0) -> None:
    # The room always holds at least the notebook metadata once it has loaded.
    deadline = asyncio.get_running_loop().time() + timeout
    while not len(notebook.ydoc.get("meta", type=Map)):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("The tab never received the notebook")
        await asyncio.sleep(0.02)


def open_tab_factory(
    jp_fetch: Any, base_ws_url: str, headers: dict[str, str]
) -> Callable[[str], Any]:
    @asynccontextmanager
    async def open_tab(path: str, notebook: YNotebook | None = None) -> AsyncIterator[Tab]:
        """``notebook``: a tab coming back with the document it kept while offline (a new
        browser tab starts empty)."""
        response = await jp_fetch(
            "api",
            "collaboration",
            "session",
            path,
            method="PUT",
            body=json.dumps({"format": "json", "type": "notebook"}),
        )
        session = json.loads(response.body)
        room = NotebookRef(path, str(session["fileId"])).room_id
        # Unescaped, as browsers send it: the room id's colons tell a document room.
        url = f"{base_ws_url}api/collaboration/room/{room}?sessionId={session['sessionId']}"
        connection = await connect_room(HTTPRequest(url, headers=headers))
        notebook = notebook if notebook is not None else YNotebook()
        awareness = Awareness(notebook.ydoc)
        try:
            channel = AwareChannel(connection, room, awareness)
            async with Provider(notebook.ydoc, channel):
                await asyncio.wait_for(channel.exchanged(), 20)
                await _synced(notebook)
                yield Tab(notebook, connection, awareness)
        finally:
            connection.close()

    return open_tab
