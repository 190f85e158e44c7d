"""The live side of a turn: the ``jupyter_loop:agent`` map every tab of the notebook sees.

Keys (see ``docs/agent.md``): ``turn`` (the current or last turn, a plain value replaced
whole), ``live`` (a Y.Array of Y.Maps, one per entry of the current turn; an assistant
entry's ``text`` is a Y.Text the server appends to while the model streams),
``approval`` (present while the agent waits for permission to run cells) and
``conversation`` (``{id, started_at, by}``: the current conversation, once a new one was
started).

Every write re-resolves the document (the room may have been rebuilt) and carries our
origin. Streamed text is gathered over a short interval and written in batches, never one
transaction per token.

Nothing goes into the map unmasked: every tab sees it at once, and a secret shown there
stays until the tab reloads. :class:`LiveTurn` masks each entry and turn field it writes,
and :class:`StreamedText` feeds the model's (or an ACP agent's) text through the masker's
streaming mode, so a secret split across chunks is masked too, and the text it returns
(what the conversation stores) is exactly the text the tabs were shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map

from ..document import LiveDocuments
from ..records import ApprovalRequest, Record, TurnRecord, live_entry
from ..secrets import SecretMasker, StreamMasker
from .store import new_id

AGENT_MAP = "jupyter_loop:agent"


def agent_map(notebook: YNotebook) -> Map:
    return notebook.ydoc.get(AGENT_MAP, type=Map)


def current_turn(notebook: YNotebook) -> TurnRecord | None:
    value = agent_map(notebook).get("turn")
    return TurnRecord.from_y(value) if isinstance(value, dict) else None


def current_approval(notebook: YNotebook) -> ApprovalRequest | None:
    value = agent_map(notebook).get("approval")
    return ApprovalRequest.from_y(value) if isinstance(value, dict) else None


def _place_approval(board: Map, approval: ApprovalRequest | None) -> None:
    if approval is not None:
        board["approval"] = approval.to_y()
    elif "approval" in board:
        del board["approval"]


async def show_approval(
    docs: LiveDocuments, room_id: str, approval: ApprovalRequest | None
) -> None:
    """Show (or clear) an approval asked for outside a turn (an external client's)."""
    async with docs.edit(room_id) as notebook:
        _place_approval(agent_map(notebook), approval)


async def show_new_conversation(
    docs: LiveDocuments, room_id: str, conversation: dict[str, Any]
) -> None:
    """Empty every tab's conversation: no turn, no entries, and the new conversation's start
    (a tab that sees it change drops the history it loaded and loads it again)."""
    async with docs.edit(room_id) as notebook:
        board = agent_map(notebook)
        for key in ("turn", "live"):
            if key in board:
                del board[key]
        board["conversation"] = dict(conversation)


class LiveTurn:
    """Writes one turn's state and entries into the notebook's shared document, masked.

    ``masker`` (None: masking is off) is the one every write of the turn goes through: the
    text fields of entries and of the turn here, streamed text in :class:`StreamedText`.
    """

    def __init__(
        self,
        docs: LiveDocuments,
        room_id: str,
        turn: TurnRecord,
        masker: SecretMasker | None = None,
    ) -> None:
        self._docs = docs
        self._room_id = room_id
        self.masker = masker
        self.turn = self._masked(turn.to_y())

    def _masked(self, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields`` with each text masked whole (masking masked text changes nothing, so
        a caller that masked it already, to store the same text, gets it back as it was)."""
        masker = self.masker
        if masker is None:
            return fields
        return {k: masker.mask(v) if isinstance(v, str) else v for k, v in fields.items()}

    async def _write(self, change: Callable[[Map], None]) -> None:
        async with self._docs.edit(self._room_id) as notebook:
            change(agent_map(notebook))

    async def begin(self, first_entry: Record) -> None:
        """Show the new turn: its state, and a fresh ``live`` list holding ``first_entry``."""

        entry = self._masked(first_entry.to_y())

        def change(board: Map) -> None:
            board["turn"] = dict(self.turn)
            board["live"] = Array([Map(entry)])
            if "approval" in board:
                del board["approval"]

        await self._write(change)

    async def update(self, **changes: Any) -> None:
        """Change fields of the turn (``state``, ``usage``, ``steps``, ...)."""
        self.turn = TurnRecord.from_y({**self.turn, **self._masked(changes)}).to_y()
        turn = dict(self.turn)
        await self._write(lambda board: board.__setitem__("turn", turn))

    async def add(self, kind: str, **fields: Any) -> str:
        """Append an entry; returns its id."""
        entry_id = new_id("e")
        entry = live_entry(kind, entry_id, **self._masked(fields))

        def change(board: Map) -> None:
            live = board.get("live")
            if not isinstance(live, Array):
                live = Array()
                board["live"] = live
            live.append(entry)

        await self._write(change)
        return entry_id

    async def append_text(self, entry_id: str | None, text: str) -> str:
        """Append to an assistant entry's text (created on the first call); returns its id.

        ``text`` is a piece of a stream, masked by :class:`StreamedText` (a piece cannot be
        masked alone: a secret may go on in the next one)."""
        if entry_id is None:
            return await self.add("assistant", text=text)

        def change(board: Map) -> None:
            live = board.get("live")
            entries = list(live) if isinstance(live, Array) else []
            for entry in reversed(entries):
                if entry.get("id") == entry_id:
                    ytext = entry["text"]
                    ytext += text
                    return

        await self._write(change)
        return entry_id

    async def set_approval(
        self, approval: ApprovalRequest | None, state: str | None = None
    ) -> None:
        """Show (or clear) a pending approval, and change the turn's state with it."""
        if state is not None:
            self.turn["state"] = state
        turn = dict(self.turn)

        def change(board: Map) -> None:
            if state is not None:
                board["turn"] = turn
            _place_approval(board, approval)

        await self._write(change)


class StreamedText:
    """Text streamed by the model for one step, masked, written every ``interval`` seconds.

    Each piece goes through the live turn's masker in streaming mode (mask before you
    write): a tail that could be the start of a secret waits for the next piece, or for
    :meth:`close`. :attr:`text` is what the tabs were shown, the whole text masked.

    Example::

        stream = StreamedText(live, 0.05)
        stream.add("Hel"); stream.add("lo")
        text = await stream.close()   # the last piece is written; returns "Hello"
    """

    def __init__(self, live: LiveTurn, interval: float) -> None:
        self._live = live
        self._masking: StreamMasker | None = live.masker.stream() if live.masker else None
        self._interval = max(0.001, interval)
        self._pending: list[str] = []
        self._parts: list[str] = []
        self._entry_id: str | None = None
        self._lock = asyncio.Lock()
        self._task = asyncio.ensure_future(self._flush_every_interval())

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def add(self, text: str) -> None:
        self._take(self._masking.feed(text) if self._masking is not None else text)

    def _take(self, masked: str) -> None:
        if masked:
            self._pending.append(masked)
            self._parts.append(masked)

    async def flush(self) -> None:
        async with self._lock:
            if not self._pending:
                return
            # The batch leaves ``_pending`` only once written: a write waits (a reload of
            # the file holds the room's writes) and a stop cancels it there, before it
            # changed the document; ``close`` then writes the batch, so the tab shows the
            # text the stored conversation keeps.
            taken = len(self._pending)
            chunk = "".join(self._pending[:taken])
            self._entry_id = await self._live.append_text(self._entry_id, chunk)
            del self._pending[:taken]

    async def _flush_every_interval(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.flush()

    async def close(self) -> str:
        """Stop the timer, write what is left, and return the step's whole text.

        A stop that comes meanwhile (the last batch waits to be written: a reload of the
        file holds the room's writes) lets the write finish, then goes on: the tab shows
        the text the turn keeps.
        """
        self._task.cancel()
        if self._masking is not None:  # the held-back tail: no piece follows it now
            self._take(self._masking.flush())
        try:
            await self._write_the_rest()
        except asyncio.CancelledError:
            await self._write_the_rest()
            raise
        return self.text

    async def _write_the_rest(self) -> None:
        await asyncio.wait([self._task])
        if not self._task.cancelled() and self._task.exception() is not None:
            pass  # a failed write: the final flush below raises it again, to the turn
        await self.flush()
