"""``jupyter loop ask NOTEBOOK "question"``: a turn of the notebook's agent, from a terminal.

The turn is the panel's: started with the same REST call, in the same conversation, shown
in every tab. The client follows the turn's live entries in the shared document
(``jupyter_loop:agent``, see ``docs/agent.md``): the answer as it streams, tool receipts,
notices. When the agent asks to run cells, the question is put in the terminal (on a
terminal) or shown with the command that answers it (piped); a tab may answer too. At the
end the turn's proposals are listed with their ids. Ctrl-C stops the turn.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TextIO

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map, Text

from ..records import ApprovalRequest, TurnRecord
from .connection import Api
from .render import BOLD, DIM, RED, YELLOW, Style, visible
from .run import DETACHED, until_detached

AGENT = ("api", "jupyter-loop", "agent")
ENDED = ("done", "stopped", "error")
ANSWERS = {"o": "once", "t": "turn", "d": "deny", "": "once"}


def entry_text(entry: dict[str, Any], style: Style) -> str | None:
    """A finished non-assistant entry as one line (None: not shown).

    Example:
        >>> entry_text({"kind": "tool", "summary": "read cell 3", "ok": True}, Style(False))
        '· read cell 3'
        >>> entry_text({"kind": "notice", "text": "Stopped.", "level": "info"}, Style(False))
        '! Stopped.'
    """
    kind = entry.get("kind")
    if kind == "tool":
        summary = visible(str(entry.get("summary", "")))
        return style.paint(f"· {summary}", DIM if entry.get("ok") else RED)
    if kind == "notice":
        colour = RED if entry.get("level") == "error" else YELLOW
        return style.paint(f"! {visible(str(entry.get('text', '')))}", colour)
    return None


class TurnFollower:
    """Prints a turn's entries as they come and answers its approvals."""

    def __init__(self, api: Api, path: str, notebook: YNotebook, out: TextIO, style: Style):
        self._api = api
        self._path = path
        self._notebook = notebook
        self._out = out
        self._style = style
        self._shown: dict[str, int] = {}  # entry id -> characters of its text printed
        self._asked: set[str] = set()
        self._at_line_start = True
        self._changed = asyncio.Event()
        self._subscription = notebook.ydoc.observe(lambda _: self._changed.set())

    def close(self) -> None:
        self._notebook.ydoc.unobserve(self._subscription)

    def _board(self) -> Map:
        return self._notebook.ydoc.get("jupyter_loop:agent", type=Map)

    async def follow(self, turn_id: str) -> str:
        """Until the turn ends; returns its end state."""
        while True:
            self._changed.clear()
            board = self._board()
            value = board.get("turn")
            turn = TurnRecord.from_y(value) if isinstance(value, dict) else None
            if turn is not None and turn.id == turn_id:
                self._print_entries(board.get("live"))
                asked = board.get("approval")
                approval = ApprovalRequest.from_y(asked) if isinstance(asked, dict) else None
                if approval is not None and approval.turn_id == turn_id:
                    await self._approval(approval)
                if turn.state in ENDED:
                    self._end_line()
                    if turn.error:
                        self._write(self._style.paint(visible(turn.error), RED) + "\n")
                    return turn.state
            try:
                await asyncio.wait_for(self._changed.wait(), 1.0)
            except asyncio.TimeoutError:
                pass

    def _print_entries(self, live: Any) -> None:
        if not isinstance(live, Array):
            return
        for entry in live:
            entry_id = str(entry.get("id"))
            if entry.get("kind") == "assistant" and isinstance(entry.get("text"), Text):
                text = str(entry["text"])
                self._write(visible(text[self._shown.get(entry_id, 0) :]))
                self._shown[entry_id] = len(text)
            elif entry_id not in self._shown:
                self._shown[entry_id] = 0
                line = entry_text(entry.to_py() or {}, self._style)
                if line is not None:
                    self._end_line()
                    self._write(line + "\n")

    async def _approval(self, approval: ApprovalRequest) -> None:
        approval_id = approval.id
        if approval_id in self._asked:
            return
        self._asked.add(approval_id)
        self._end_line()
        cells = list(approval.cell_ids)
        asks = f"The agent asks to run {visible(', '.join(cells))}:"
        self._write(self._style.paint(asks, BOLD) + "\n")
        for cell_id in cells:
            # Made visible before splitting: a bare CR must show, not start a new line.
            source = visible(approval.sources.get(cell_id, ""))
            self._write("".join(f"  │ {line}\n" for line in source.splitlines()))
        if not sys.stdin.isatty():
            hint = f"jupyter loop approve {self._path} {visible(approval_id)} [--turn|--deny]"
            self._write(f"Waiting for an answer in a tab or with: {hint}\n")
            return
        reply = await asyncio.to_thread(input, "Allow? [o]nce / [t]urn / [d]eny: ")
        decision = ANSWERS.get(reply.strip().lower()[:1], "deny")
        body = {"path": self._path, "decision": decision, "answered_in": "terminal"}
        await self._api.call(*AGENT, "approvals", approval_id, method="POST", body=body)

    def _end_line(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def _write(self, text: str) -> None:
        if text:
            self._out.write(text)
            self._out.flush()
            self._at_line_start = text.endswith("\n")


def proposals_of(notebook: YNotebook, turn_id: str) -> list[dict[str, Any]]:
    found = notebook.ydoc.get("jupyter_loop:proposals", type=Map)
    mine = [dict(p) for p in found.values() if isinstance(p, dict) and p.get("turn_id") == turn_id]
    return sorted(mine, key=lambda p: str(p.get("created_at", "")))


async def ask_command(
    api: Api,
    path: str,
    question: str,
    model: str | None,
    approval: str | None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    *,
    agent: str | None = None,
) -> int:
    """Ask; 0 when the turn ended ``done``, 1 otherwise (stopped, error), 130 detached.

    ``agent``: an ACP agent the server hosts (``GET agents``), in the same conversation."""
    style = Style(tty=out.isatty())
    body: dict[str, Any] = {"path": path, "message": question}
    if agent:
        body["agent"] = agent
    if model:
        body["model"] = model
    if approval:
        body["approval"] = approval
    async with api.room(path) as notebook:
        reply = await api.call(*AGENT, "turns", method="POST", body=body)
        turn_id = str(reply["turn_id"])
        follower = TurnFollower(api, path, notebook, out, style)

        def stop() -> Any:
            return api.call(*AGENT, "turns", turn_id, "stop", method="POST", body={"path": path})

        try:
            state = await until_detached(follower.follow(turn_id), stop, err, "Stopping the turn")
        finally:
            follower.close()
        if state is None:
            return DETACHED
        for proposal in proposals_of(notebook, turn_id):
            shown = {key: visible(str(value)) for key, value in proposal.items()}
            where = shown.get("cell_id") if proposal.get("cell_id") else "the top"
            line = f"proposal {shown['id']}: {shown['kind']} {where} ({shown['status']})"
            out.write(style.paint(line, BOLD) + f"  {shown.get('summary', '')}\n")
            if proposal["status"] == "pending":
                out.write(f"  jupyter loop accept {path} {shown['id']}  (or reject)\n")
    return 0 if state == "done" else 1
