"""The ACP client's side of a session: what an agent may ask of the server, under our rules.

- ``fs/read_text_file`` of a notebook returns the live notebook as the MCP tools show it
  (masked, the outputs with it), never the file on disk, which lags the shared document;
  another file is read through the contents manager, masked whole before a line range is
  cut from it, if the user may read contents.
- ``fs/write_text_file`` of a notebook becomes proposals (one per changed, new or removed
  cell, through the same tools an MCP client calls): nothing is written behind the shared
  document. Another file is saved through the contents manager if the user may write
  contents. Paths outside the server's root are refused.
- ``session/request_permission`` and ``session/update`` go to the turn under way
  (:class:`TurnSide`); between turns a permission request is refused.
- ``terminal/*`` is offered only when the session's person has Jupyter's terminals right
  in a mode that may run code (:attr:`SessionScope.terminal_refusal`); otherwise the
  capability is not advertised and every terminal request is refused, saying why. A
  command runs as the server's user in the notebook's folder, its output masked before the
  agent reads it and before it is cut (:mod:`.terminals`); each is journalled by the turn
  that ran it, and every one is ended with the session (:meth:`NotebookClient.close`).
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import nbformat
from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)
from jupyter_server.utils import ensure_async

from ..access.rights import Ability, Grants
from ..agent.callers import Caller
from ..agent.outside import OutsideAgents
from ..document import LiveDocuments
from ..secrets import SecretMasker
from .terminals import Terminal, TerminalRequest, Terminals, argv_of, described

FORBIDDEN = -32001
"""The JSON-RPC error code of a request the user's rights refuse."""


class TurnSide(Protocol):
    """The turn under way: where updates are written and permission asked."""

    async def apply(self, update: Any) -> None: ...

    async def permission(self, tool_call: Any, options: list[Any]) -> RequestPermissionResponse: ...

    def record(self, action: str, **details: Any) -> None:
        """Journal an action of the agent in this turn (named as the turn's agent)."""


@dataclass(frozen=True)
class SessionScope:
    """What a session may touch, and as whom: the notebook it was opened on, the server's
    root, the user's rights (narrowed to the chosen mode) and the services that apply them."""

    path: str
    root_dir: Path
    grants: Grants
    caller: Caller
    docs: LiveDocuments
    outside: OutsideAgents
    contents: Any
    masker: SecretMasker | None
    terminal_refusal: str | None = None
    """Why the agent may not run commands (None: it may; see :func:`terminal_refusal`)."""


def terminal_refusal(grants: Grants, scope: str) -> str | None:
    """Why a session of ``grants`` in token ``scope`` gets no terminals (None: it does).

    The person's own terminals right (the one rule, :attr:`Ability.TERMINAL`), and a mode
    that may run code: a command is code run, so a turn that may only propose runs none."""
    missing = grants.missing(Ability.TERMINAL)
    if missing:
        return f"{grants.user} may not run commands on the server (needs {', '.join(missing)})."
    if scope != "run":
        return "This turn's mode may not run code, so it runs no commands."
    return None


def refused(message: str) -> RequestError:
    return RequestError(FORBIDDEN, message)


class NotebookClient:
    """The ACP ``Client`` of one session (see the module docstring)."""

    def __init__(self, scope: SessionScope) -> None:
        self.scope = scope
        self.turn: TurnSide | None = None
        self.commands: list[Any] | None = None
        self.terminals = Terminals(scope.masker)
        """The agent's slash commands it announced between turns (after ``session/new``,
        as Qwen Code does), not yet shown: the next turn shows them."""

    # -- the turn ----------------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        if self.turn is not None:
            await self.turn.apply(update)
        elif getattr(update, "session_update", "") == "available_commands_update":
            self.commands = list(update.available_commands or [])

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        if self.turn is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return await self.turn.permission(tool_call, options)

    # -- files -------------------------------------------------------------------------

    def api_path(self, path: str) -> str:
        """The contents path of an absolute path the agent names; refused outside the root."""
        root = self.scope.root_dir.resolve()
        target = Path(path)
        if not target.is_absolute():
            target = root / target
        resolved = target.resolve()
        if resolved != root and root not in resolved.parents:
            raise refused(f"{path} is outside the server's root directory.")
        return resolved.relative_to(root).as_posix()

    def _need(self, ability: Ability, doing: str) -> None:
        missing = self.scope.grants.missing(ability)
        if missing:
            raise refused(f"{self.scope.grants.user} may not {doing} (needs {', '.join(missing)}).")

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        api = self.api_path(path)
        self._need(Ability.READ, f"read {api}")
        scope = self.scope
        if api.endswith(".ipynb"):
            view = await scope.outside.read_notebook(api, scope.caller)
            text = view.text  # masked as the MCP tools return it
        else:
            try:
                model = await ensure_async(scope.contents.get(api, content=True, format="text"))
            except Exception as e:  # missing, a directory, not text: say so to the agent
                raise RequestError.resource_not_found(api) from e
            text = str(model.get("content") or "")
            text = scope.masker.mask(text) if scope.masker is not None else text
        if line is not None or limit is not None:  # cut only once masked whole
            lines = text.splitlines(keepends=True)
            start = max(0, (line or 1) - 1)
            text = "".join(lines[start : start + limit if limit is not None else None])
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> None:
        api = self.api_path(path)
        if api.endswith(".ipynb"):
            self._need(Ability.PROPOSE, f"propose edits to {api}")
            await self._propose(api, content)
            return
        self._need(Ability.PROPOSE, f"write {api}")
        model = {"type": "file", "format": "text", "content": content}
        await ensure_async(self.scope.contents.save(model, api))

    async def _propose(self, api: str, content: str) -> None:
        """The notebook the agent wrote, as proposals against the live one."""
        try:
            written = nbformat.reads(content, as_version=4)
        except Exception as e:
            raise RequestError.invalid_params({"details": f"not a notebook: {e}"}) from e
        scope = self.scope
        room_id = await scope.docs.room_id(api)
        notebook = await scope.docs.notebook(room_id)
        live = {str(c.get("id")): str(c.get("source", "")) for c in notebook.ycells}
        calls: list[tuple[str, dict[str, Any]]] = []
        summary = f"{scope.caller.client} rewrote the notebook file"
        previous: str | None = None
        kept: set[str] = set()
        for cell in written.cells:
            cell_id = str(cell.get("id") or "")
            source = str(cell.get("source", ""))
            if cell_id in live:
                kept.add(cell_id)
                if live[cell_id] != source:
                    calls.append(
                        (
                            "propose_modify",
                            {"cell_id": cell_id, "source": source, "summary": summary},
                        )
                    )
                previous = cell_id
                continue
            cell_type = str(cell.get("cell_type", "code"))
            arguments = {
                "after_cell_id": previous,
                "cell_type": cell_type if cell_type in ("code", "markdown", "raw") else "code",
                "source": source,
                "summary": summary,
            }
            calls.append(("propose_insert", arguments))
        for cell_id in live:
            if cell_id not in kept:
                calls.append(("propose_delete", {"cell_id": cell_id, "summary": summary}))
        failed = []
        for name, arguments in calls:
            outcome = await scope.outside.call(api, name, arguments, scope.caller, 0.0)
            if not outcome.ok:
                failed.append(outcome.summary)
        if failed:
            raise RequestError.invalid_params({"details": json.dumps(failed)})

    # -- terminals ---------------------------------------------------------------------

    @property
    def offers_terminals(self) -> bool:
        return self.scope.terminal_refusal is None

    def _terminal(self, terminal_id: str) -> Terminal:
        if self.scope.terminal_refusal is not None:
            raise refused(self.scope.terminal_refusal)
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.resource_not_found(terminal_id)
        return terminal

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_: Any,
    ) -> CreateTerminalResponse:
        scope = self.scope
        if scope.terminal_refusal is not None:
            raise refused(scope.terminal_refusal)
        turn = self.turn
        if turn is None:  # a command nobody asked for, nowhere to journal it
            raise refused("Commands are run only during a turn.")
        folder = self.api_path(cwd) if cwd else posixpath.dirname(scope.path)
        where = scope.root_dir.resolve() / folder
        if not where.is_dir():
            raise RequestError.invalid_params({"details": f"{folder or '/'} is not a folder."})
        request = TerminalRequest(
            argv=argv_of(command, args),
            cwd=str(where),
            env={variable.name: variable.value for variable in env or []},
            output_byte_limit=output_byte_limit,
        )
        try:
            terminal_id = await self.terminals.create(request, turn.record)
        except OSError as e:
            turn.record("terminal_command", **described(request), error=str(e))
            raise RequestError.invalid_params(
                {"details": f"could not start {command}: {e.strerror or e}"}
            ) from e
        turn.record("terminal_command", **described(request), terminal_id=terminal_id)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> TerminalOutputResponse:
        shown = self.terminals.output(self._terminal(terminal_id))
        status = TerminalExitStatus(exit_code=shown.exit_code, signal=shown.signal)
        return TerminalOutputResponse(
            output=shown.output,
            truncated=shown.truncated,
            exit_status=status if shown.exited else None,
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> WaitForTerminalExitResponse:
        code, sent = await self._terminal(terminal_id).wait()
        return WaitForTerminalExitResponse(exit_code=code, signal=sent)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> KillTerminalResponse:
        terminal = self._terminal(terminal_id)
        if self.turn is not None:
            self.turn.record("terminal_kill", terminal_id=terminal_id)
        await terminal.kill()
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> ReleaseTerminalResponse:
        self._terminal(terminal_id)
        await self.terminals.release(terminal_id)
        return ReleaseTerminalResponse()

    async def close(self) -> None:
        """End every command the agent started (its session ends)."""
        await self.terminals.close()

    # -- not offered -------------------------------------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
