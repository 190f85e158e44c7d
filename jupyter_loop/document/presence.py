"""Who is in a notebook now: people and the cell each has in hand, as their tabs say,
and agents at work, as the server says.

Each tab publishes the cell its person has active and the cells selected with it in the
notebook room's awareness (``records.FOCUS_FIELD``), beside the ``user`` field that
jupyter-collaboration's tabs publish. The server only reads it: the room's awareness is
what every tab already sees of the others, so an outside agent asking "which cell is
this?" gets what a person in another tab sees, no more. A tab stops being counted when it
leaves or its state goes stale (the protocol's 30 s without renewal).

Agents are shown the same way, by the server: each agent (the panel's assistant for a
person, an MCP client, the terminal client) gets an awareness entry of its own in the
room, with a name and colour in ``user`` like a person's and what it does to which cell
(``records.AGENT_FIELD``), renewed at each of its tool calls; tabs forget it 30 s after
its last, as they forget a closed tab. An agent that leaves cells running (a call that
stopped waiting for a long run) stays shown on the cell running, renewed every
:data:`RENEW_SECONDS`, until its cells are done. Rejected: a field in the server's own awareness
state, one for all agents: two agents at work would overwrite each other, and a tab could
not tell one that left from one that is quiet.

Example:
    >>> states = {
    ...     7: {"user": {"display_name": "Ada"},
    ...         "jupyter_loop_focus": {"cell_id": "c2", "selected_cell_ids": ["c2"]}},
    ...     9: {"user": {"name": "bob"}},
    ... }
    >>> [(p.name, p.focus and p.focus.cell_id) for p in people_of(states)]
    [('Ada', 'c2'), ('bob', None)]
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Assoc, Encoder, StickyIndex, Text

from ..access.identity import made_at_random, server_login_name
from ..errors import NotFound
from ..records import AGENT_FIELD, FOCUS_FIELD, AgentAtWork, CellFocus
from . import collaboration
from .cells import find_cell

MAX_PEOPLE = 50
"""People listed at most (a lecture's room can hold hundreds of tabs)."""

RENEW_SECONDS = 10.0
"""How often an agent whose cells still run is shown again: well within the 30 s after
which tabs forget an awareness entry that was not renewed."""

Busy = Callable[[], Awaitable["str | None"]]
"""Which of an agent's cells runs now (``None``: none is queued or running any more)."""


@dataclass(frozen=True)
class PersonFocus:
    """A person with the notebook open in a tab, and the cells in their hand there."""

    name: str
    focus: CellFocus | None


def person_name(state: dict[str, Any]) -> str:
    """The name a tab's ``user`` field shows to others (as JupyterLab's collaborators
    panel shows it); a user Jupyter named after a random moon, per browser session, is
    the server's one person, named as the history and the journal name them
    (:func:`..access.identity.user_name_of`)."""
    user = state.get("user")
    if made_at_random(user):
        return server_login_name()
    if isinstance(user, dict):
        for key in ("display_name", "name", "username"):
            value = user.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:80]
    return "someone"


def people_of(states: dict[int, dict[str, Any]]) -> tuple[PersonFocus, ...]:
    """The people behind the room's awareness states, tabs with a cell in hand first."""
    people = [
        PersonFocus(person_name(state), CellFocus.from_json(state.get(FOCUS_FIELD)))
        for _, state in sorted(states.items())
        if AGENT_FIELD not in state  # an agent at work, not a person
    ]
    people.sort(key=lambda p: p.focus is None or p.focus.cell_id is None)
    return tuple(people[:MAX_PEOPLE])


COLOURS = 7
"""JupyterLab's collaborator colours (``--jp-collaborator-color1`` … ``7``)."""


class AgentPresence:
    """Puts agents at work into their notebook's awareness (see the module docstring)."""

    def __init__(self, room_of: Callable[[str], Any | None]) -> None:
        self._room_of = room_of
        self._clocks: dict[tuple[str, str], int] = {}
        self._kept: dict[tuple[str, str], asyncio.Task[None]] = {}

    def show(self, room_id: str, name: str, cell_id: str | None, action: str) -> None:
        """Show ``name`` doing ``action`` to ``cell_id`` in the notebook, if a room (so a
        tab) has it open."""
        room = self._room_of(room_id)
        if room is None:
            return
        # Each renewal must be newer than the last, or the tabs keep the last: the time in
        # tenths of a second (newer than what tabs hold from before a server restart), and
        # one more than the last for calls that come closer together.
        last = self._clocks.get((room_id, name), 0)
        clock = self._clocks[(room_id, name)] = max(last + 1, int(time.time() * 10))
        work = AgentAtWork(cell_id, action)
        notebook = collaboration.notebook_of(room)
        caret = cell_caret(notebook, cell_id) if notebook is not None and cell_id else None
        collaboration.announce(room, agent_update(room_id, name, work, clock, caret))

    def keep_while(self, room_id: str, name: str, action: str, busy: Busy) -> None:
        """Show ``name`` doing ``action`` on the cell ``busy`` says runs, every
        :data:`RENEW_SECONDS`, until none does (a later call of the same agent in the
        same notebook takes over)."""
        key = (room_id, name)
        previous = self._kept.pop(key, None)
        if previous is not None:
            previous.cancel()
        task = asyncio.ensure_future(self._renew(room_id, name, action, busy))
        self._kept[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))

    async def _renew(self, room_id: str, name: str, action: str, busy: Busy) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            try:
                cell_id = await busy()
            except Exception:  # the notebook went away: nothing to show
                return
            if cell_id is None or self._room_of(room_id) is None:
                return
            self.show(room_id, name, cell_id, action)

    def _forget(self, key: tuple[str, str], done: asyncio.Task[None]) -> None:
        if self._kept.get(key) is done:
            del self._kept[key]

    async def stop(self) -> None:
        """Stop showing agents whose cells still run (the server stops)."""
        tasks = list(self._kept.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)


def cell_caret(notebook: YNotebook, cell_id: str) -> dict[str, Any] | None:
    """Where an agent's caret shows in a cell's editor: the end of its source, as a Y
    relative position (JSON), so it stays at the end while people type before it.
    ``None``: no such cell.

    >>> notebook = YNotebook()
    >>> notebook.append_cell({"id": "c0", "cell_type": "code", "source": "1 + 1"})
    >>> sorted(cell_caret(notebook, "c0")), cell_caret(notebook, "gone")
    (['assoc', 'item'], None)
    """
    try:
        _, ycell = find_cell(notebook, cell_id)
    except NotFound:
        return None
    source = ycell.get("source")
    if not isinstance(source, Text):
        return None
    # Before the end, holding on to the last character (pycrdt cannot make the position
    # after the end with the forward association: it panics). Positions count UTF-16
    # units here, as Yjs does, where len() counts UTF-8 bytes.
    end = len(str(source).encode("utf-16-le")) // 2
    position: dict[str, Any] = StickyIndex.new(source, end, Assoc.BEFORE).to_json()
    return position


def agent_update(
    room_id: str,
    name: str,
    work: AgentAtWork,
    clock: int,
    caret: dict[str, Any] | None = None,
) -> bytes:
    """An awareness update with one entry: the agent ``name`` in this room, at ``work``,
    its caret (``cell_caret``) in the cell's editor when given. Its client id is the same
    for the same agent in the same room, so each call renews one entry.

    The caret is the ``cursors`` field jupyter-collaboration's editors draw remote
    carets from (with the name beside it), as for a person in another tab.

    >>> from pycrdt import Awareness, Doc
    >>> tab = Awareness(Doc())
    >>> tab.apply_awareness_update(agent_update("r", "bot", AgentAtWork("c1", "running"), 1), "")
    >>> [(s["user"]["name"], s["jupyter_loop_agent"]) for s in tab.states.values() if s]
    [('bot', {'cell_id': 'c1', 'action': 'running'})]
    """
    digest = hashlib.sha256(f"{room_id}\0{name}".encode()).digest()
    client_id = int.from_bytes(digest[:4], "big") or 1  # a Yjs client id: 32 bits
    colour = digest[4] % COLOURS + 1
    initials = "".join(word[0] for word in name.split()[:2]).upper() or "A"
    state: dict[str, Any] = {
        "user": {
            "username": f"agent:{name}",
            "name": name,
            "display_name": name,
            "initials": initials,
            "color": f"var(--jp-collaborator-color{colour})",
        },
        AGENT_FIELD: work.to_y(),
    }
    if caret is not None:
        state["cursors"] = [{"anchor": caret, "head": caret, "primary": True}]
    encoder = Encoder()
    encoder.write_var_uint(1)
    encoder.write_var_uint(client_id)
    encoder.write_var_uint(clock)
    encoder.write_var_string(json.dumps(state, separators=(",", ":")))
    return encoder.to_bytes()
