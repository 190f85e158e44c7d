"""A scripted ACP agent, written with the ACP SDK, for tests: ``python -m
jupyter_loop.testing.acp_agent``.

It speaks ACP on stdin/stdout as a real agent process does; what it does in a turn is the
prompt's text, one command a line (so a test reads as what the agent does):

- ``say TEXT``: stream TEXT as two message chunks;
- ``tool TITLE``: a tool call that starts, then completes;
- ``mcp TOOL {json arguments}``: call a tool of the first MCP server the session was
  given (over HTTP, with the headers given), and say what it answered;
- ``read PATH``: ``fs/read_text_file`` of PATH (relative to the session's cwd), said back;
- ``edit PATH INDEX SOURCE``: read the notebook file from disk (as an agent's own file
  tools would), set cell INDEX's source, and ``fs/write_text_file`` the whole notebook;
- ``write PATH TEXT``: ``fs/write_text_file`` of a plain file;
- ``permission TITLE``: ``session/request_permission``; says the option chosen;
- ``pid``: say the process id (a test checks the process is gone later);
- ``think TEXT``: stream TEXT as two thought chunks;
- ``diff PATH OLD NEW``: a tool call that completes with a ``diff`` of PATH, OLD → NEW;
- ``plan``: a plan of three entries (completed, in progress, pending);
- ``commands``: ``available_commands_update`` with ``/explain`` and ``/fix``;
- ``sleep SECONDS``: wait that long (a turn that goes on while a test closes its tab);
- ``hang``: wait for ``session/cancel`` (then the turn ends ``cancelled``);
- ``crash``: exit at once with status 3, mid-turn, saying ``SCRIPTED_LAST_WORDS`` on
  stderr as ``Error: …`` and a backtrace (with ``SCRIPTED_NO_BACKTRACE``: the words
  alone);
- ``fail WORDS``: answer the prompt with a JSON-RPC error, ``Internal error`` with WORDS as
  its ``details`` (as Qwen Code answers when its model refuses it; Codex's is alike);
- ``run COMMAND``: ``terminal/create`` of the shell line COMMAND, ``wait_for_exit``,
  ``terminal/output`` and ``release``; says ``exit CODE (truncated?): OUTPUT`` and the
  output reversed (``reversed: …``: what the agent was given, past the conversation's own
  masking, which would hide a secret said as is);
- ``runcut LIMIT COMMAND``: ``run`` with ``outputByteLimit`` LIMIT;
- ``runin FOLDER COMMAND``: ``run`` in FOLDER (absolute, as ACP asks);
- ``runkill COMMAND``: ``run``, but ``terminal/kill`` it after a moment; says
  ``killed: SIGNAL``;
- ``spawn COMMAND``: ``terminal/create`` left running; after a moment says
  ``spawned ID: OUTPUT`` (a test reads the pid a command prints, and checks it ends);
- ``usage INPUT OUTPUT``: the prompt's response reports that many tokens used;
- ``session``: say the session's id;
- ``recall``: say the first lines of the session's earlier prompts (what it remembers).

With ``SCRIPTED_ACP_STATE`` set to a directory, the agent advertises ``loadSession`` and
keeps each session's prompts there (one JSON file a session, as a real agent keeps its
history on disk), so a new process (after the server restarted) can ``session/load`` it;
loading replays the earlier prompts as ``session/update`` notifications, as ACP asks.
Without it, sessions live in the process only and ``loadSession`` is not advertised.

With ``SCRIPTED_SIGNED_OUT`` set, ``session/new`` is answered ``Authentication required``
(JSON-RPC -32000), as an agent that needs its person to log in first answers.

In ``say``, ``tool``, ``think`` and ``fail``, ``${NAME}`` is the agent's environment
variable NAME: an agent that writes out a secret it holds (the prompt it was sent is
masked, so a test cannot give it one there).

Errors of the client's methods are said back (``error: …``), never raised: a test reads
them in the conversation.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Client,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandsUpdate,
    Implementation,
    McpCapabilities,
    PermissionOption,
    ToolCallUpdate,
    Usage,
)

_ENV_NAME = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ScriptedAgent:
    """Runs each prompt's script (see the module docstring)."""

    def __init__(self) -> None:
        self._client: Client | None = None
        self._sessions: dict[str, dict[str, Any]] = {}
        self._cancelled: dict[str, asyncio.Event] = {}
        state = os.environ.get("SCRIPTED_ACP_STATE")
        self._state = Path(state) if state else None

    def _keep(self, session_id: str) -> None:
        if self._state is not None:
            kept = {k: v for k, v in self._sessions[session_id].items() if k != "mcp"}
            self._state.mkdir(parents=True, exist_ok=True)
            (self._state / f"{session_id}.json").write_text(json.dumps(kept), encoding="utf-8")

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **_: Any,
    ) -> InitializeResponse:
        fs = getattr(client_capabilities, "fs", None)
        self._capabilities = {
            "read": bool(getattr(fs, "read_text_file", False)),
            "write": bool(getattr(fs, "write_text_file", False)),
            "terminal": bool(getattr(client_capabilities, "terminal", False)),
        }
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=self._state is not None, mcp_capabilities=McpCapabilities(http=True)
            ),
            agent_info=Implementation(name="scripted-acp-agent", version="1"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        if os.environ.get("SCRIPTED_SIGNED_OUT"):
            raise RequestError.auth_required()
        session_id = f"s{len(self._sessions) + 1}-{uuid.uuid4().hex[:8]}"
        self._sessions[session_id] = {"cwd": cwd, "mcp": list(mcp_servers or []), "said": []}
        self._cancelled[session_id] = asyncio.Event()
        self._keep(session_id)
        return NewSessionResponse(session_id=session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        kept = self._state / f"{session_id}.json" if self._state is not None else None
        if kept is None or not kept.is_file() or "/" in session_id:
            raise RequestError.resource_not_found(session_id)
        said = list(json.loads(kept.read_text(encoding="utf-8")).get("said", []))
        self._sessions[session_id] = {"cwd": cwd, "mcp": list(mcp_servers or []), "said": said}
        self._cancelled[session_id] = asyncio.Event()
        for earlier in said:  # the conversation replayed to the client, as ACP asks
            await self._say(session_id, f"(earlier) {earlier}")
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        if session_id in self._cancelled:
            self._cancelled[session_id].set()

    async def prompt(self, prompt: list[Any], session_id: str, **extra: Any) -> PromptResponse:
        self._cancelled[session_id] = asyncio.Event()
        script = "\n".join(getattr(block, "text", "") for block in prompt)
        session = self._sessions[session_id]
        earlier = list(session["said"])
        session["said"].append(script.splitlines()[0] if script.strip() else "")
        self._keep(session_id)
        session["earlier"] = earlier
        session["usage"] = None
        for line in script.splitlines():
            command, _, rest = line.strip().partition(" ")
            if command == "hang":
                await self._cancelled[session_id].wait()
                return PromptResponse(stop_reason="cancelled")
            if command:
                await self._do(session_id, command, rest)
            if self._cancelled[session_id].is_set():
                return PromptResponse(stop_reason="cancelled", usage=session["usage"])
        return PromptResponse(stop_reason="end_turn", usage=session["usage"])

    async def _say(self, session_id: str, text: str) -> None:
        assert self._client is not None
        half = len(text) // 2
        for piece in (text[:half], text[half:]):
            if piece:
                await self._client.session_update(session_id, update_agent_message_text(piece))

    async def _do(self, session_id: str, command: str, rest: str) -> None:
        client = self._client
        assert client is not None
        session = self._sessions[session_id]
        if command in ("say", "tool", "think", "fail"):
            rest = _ENV_NAME.sub(lambda found: os.environ.get(found[1], ""), rest)
        if command == "say":
            await self._say(session_id, rest)
        elif command == "tool":
            await client.session_update(session_id, start_tool_call("t1", rest, kind="other"))
            await client.session_update(session_id, update_tool_call("t1", status="completed"))
        elif command == "think":
            for piece in (rest[: len(rest) // 2], rest[len(rest) // 2 :]):
                await client.session_update(session_id, update_agent_thought_text(piece))
        elif command == "diff":
            path, old, new = rest.split(" ", 2)
            change = tool_diff_content(path, new, old)
            await client.session_update(
                session_id, start_tool_call("t2", f"Edit {path}", kind="edit", content=[change])
            )
            await client.session_update(session_id, update_tool_call("t2", status="completed"))
        elif command == "plan":
            steps = [("read the error", "completed"), ("fix the cell", "in_progress")]
            steps.append(("run it again", "pending"))
            entries = [plan_entry(text, status=status) for text, status in steps]  # type: ignore[arg-type]
            await client.session_update(session_id, update_plan(entries))
        elif command == "commands":
            commands = [
                AvailableCommand(name="explain", description="Explain the selected cell"),
                AvailableCommand(name="fix", description="Fix the last error"),
            ]
            await client.session_update(
                session_id,
                AvailableCommandsUpdate(
                    session_update="available_commands_update", available_commands=commands
                ),
            )
        elif command == "sleep":
            await asyncio.sleep(float(rest))
        elif command == "pid":
            await self._say(session_id, f"pid {os.getpid()}")
        elif command == "crash":  # as a Rust agent dies: the error, then its backtrace
            words = os.environ.get("SCRIPTED_LAST_WORDS", "the scripted agent broke")
            frames = "   0: anyhow::Error::from\n   1: main\n"  # codex-acp's, shortened
            if os.environ.get("SCRIPTED_NO_BACKTRACE"):
                frames = ""
            sys.stderr.write(
                f"Error: {words}\n\nStack backtrace:\n{frames}" if frames else f"{words}\n"
            )
            sys.stderr.flush()
            os._exit(3)
        elif command == "fail":
            raise RequestError.internal_error({"details": rest})
        elif command == "mcp":
            name, _, arguments = rest.partition(" ")
            await self._say(
                session_id, await _call_mcp(session["mcp"], name, json.loads(arguments))
            )
        elif command == "read":
            try:
                read = await client.read_text_file(
                    path=str(Path(session["cwd"]) / rest), session_id=session_id
                )
                await self._say(session_id, read.content)
            except RequestError as e:
                await self._say(session_id, f"error: {e}")
        elif command == "edit":
            path, index, source = rest.split(" ", 2)
            full = Path(session["cwd"]) / path
            notebook = json.loads(full.read_text(encoding="utf-8"))
            notebook["cells"][int(index)]["source"] = source
            await self._write(session_id, str(full), json.dumps(notebook))
        elif command == "write":
            path, _, text = rest.partition(" ")
            await self._write(session_id, str(Path(session["cwd"]) / path), text)
        elif command == "permission":
            # The "always" options first, as real agents list them (Qwen Code does): an
            # answer for this once must not pick them.
            options = [
                PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
                PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                PermissionOption(option_id="never", name="Always reject", kind="reject_always"),
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ]
            call = ToolCallUpdate(tool_call_id="p1", title=rest, kind="execute")
            answer = await client.request_permission(
                options=options, session_id=session_id, tool_call=call
            )
            outcome = answer.outcome
            chosen = getattr(outcome, "option_id", None) or outcome.outcome
            await self._say(session_id, f"permission: {chosen}")
        elif command in ("run", "runcut", "runin", "runkill", "spawn"):
            await self._terminal(session_id, command, rest)
        elif command == "usage":
            used, made = (int(n) for n in rest.split())
            session["usage"] = Usage(
                input_tokens=used, output_tokens=made, total_tokens=used + made
            )
        elif command == "session":
            await self._say(session_id, f"session {session_id}")
        elif command == "recall":
            earlier = session.get("earlier") or []
            await self._say(session_id, "remembered: " + (" | ".join(earlier) or "nothing"))
        elif command == "capabilities":
            await self._say(session_id, json.dumps(self._capabilities, sort_keys=True))
        else:
            await self._say(session_id, f"unknown command {command}")

    async def _terminal(self, session_id: str, command: str, rest: str) -> None:
        """``run``, ``runcut`` and ``spawn`` (see the module docstring)."""
        assert self._client is not None
        client, limit, cwd = self._client, None, None
        if command == "runcut":
            cut, _, rest = rest.partition(" ")
            limit = int(cut)
        elif command == "runin":
            cwd, _, rest = rest.partition(" ")
        try:
            made = await client.create_terminal(
                command=rest, session_id=session_id, output_byte_limit=limit, cwd=cwd
            )
            terminal_id = made.terminal_id
            if command == "runkill":
                await asyncio.sleep(0.3)
                await client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
            if command == "spawn":
                await asyncio.sleep(0.5)
                shown = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
                await self._say(session_id, f"spawned {terminal_id}: {shown.output}")
                return
            ended = await client.wait_for_terminal_exit(
                session_id=session_id, terminal_id=terminal_id
            )
            shown = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
            await client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        except RequestError as e:
            await self._say(session_id, f"error: {e}")
            return
        if command == "runkill":
            await self._say(session_id, f"killed: {ended.signal}")
            return
        cut = " (truncated)" if shown.truncated else ""
        await self._say(session_id, f"exit {ended.exit_code}{cut}: {shown.output}")
        await self._say(session_id, f"reversed: {shown.output[::-1]}")

    async def _write(self, session_id: str, path: str, content: str) -> None:
        assert self._client is not None
        try:
            await self._client.write_text_file(content=content, path=path, session_id=session_id)
            await self._say(session_id, f"wrote {Path(path).name}")
        except RequestError as e:
            await self._say(session_id, f"error: {e}")


async def _call_mcp(servers: list[Any], name: str, arguments: dict[str, Any]) -> str:
    """One tool call on the session's first MCP server, as an agent's MCP client makes it."""
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    if not servers:
        return "error: no MCP server was given"
    server = servers[0]
    headers = {header.name: header.value for header in server.headers}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool(name, arguments)
    texts = [getattr(part, "text", "") for part in result.content]
    return ("error: " if result.is_error else "") + "\n".join(texts)


def main() -> None:
    asyncio.run(run_agent(ScriptedAgent()))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
