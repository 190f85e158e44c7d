"""One ACP session: the agent's process, the connection to it, and the session it opened.

The process is started in a process group of its own (the registry's agents are often a
launcher that starts the real program), its stderr is drained (a full pipe would stall
the agent) and its tail kept for the message shown when it dies. :meth:`AcpSession.close`
ends it whatever state it is in: stdin closed, then SIGTERM to the group, then SIGKILL,
and the session's access token is revoked (``on_close``).

The client advertises reading and writing text files, and terminals only to a person
with Jupyter's terminals right (see :mod:`.client`); it hands the agent jupyter-loop's own
MCP endpoint, over HTTP with the session's token, when the agent says it can reach MCP
servers over HTTP.

Given the id of a session an earlier process opened (:mod:`.kept`), it is reopened with
``session/load`` when the agent advertises ``loadSession``; the agent then replays the
conversation as ``session/update`` notifications, which are not written anywhere (no turn
is under way yet: the conversation shows those turns already). An agent that cannot load
it, or refuses to, gets ``session/new``, and :attr:`AcpSession.resumed` says which.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, RequestError, text_block
from acp.core import ClientSideConnection
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    HttpHeader,
    HttpMcpServer,
    Implementation,
    PromptResponse,
)

from .catalog import AgentCommand
from .client import NotebookClient
from .left_running import this_servers_mark

STDERR_KEPT = 4000
READ_LIMIT = 50 * 2**20
"""Bytes one JSON-RPC line of the agent may take (an image or a long file read)."""


WORDS_SHOWN = 300
"""Characters of the agent's own words a message quotes. They are masked whole first: a
secret cut in two is no longer one the masker knows."""

AUTH_REQUIRED = -32000
"""ACP's JSON-RPC error code for an agent that needs its person to sign in first."""


class AgentGone(Exception):
    """The agent's process ended (or closed its output) while the server waited on it."""


class AgentRefused(Exception):
    """The agent answered a request with an error (Qwen Code and Codex answer so when their
    model refuses them, a signed-out agent so to ``session/new``). The message says so in
    the agent's own words; the process and its session go on."""


class AcpSession:
    """The agent's process and its one session (see the module docstring)."""

    def __init__(
        self,
        command: AgentCommand,
        client: NotebookClient,
        cwd: str,
        mcp: tuple[str, str] | None,
        on_close: Callable[[], None],
        start_timeout: float = 60.0,
    ) -> None:
        self.command = command
        self.client = client
        self._cwd = cwd
        self._mcp = mcp  # (url, token)
        self._on_close = on_close
        self._start_timeout = start_timeout
        self.process: asyncio.subprocess.Process | None = None
        self._conn: ClientSideConnection | None = None
        self._stderr: bytearray = bytearray()
        self._stderr_trimmed = False  # only its last STDERR_KEPT bytes are kept
        self._drain: asyncio.Task[None] | None = None
        self.session_id = ""
        self.reaches_tools = False
        """Whether the agent was given jupyter-loop's MCP endpoint."""
        self.resumed: str | None = None
        """With an earlier session's id: "loaded", "unsupported" (the agent cannot load a
        session) or "refused: WHY" (it could not load that one); then a new one was opened."""
        self.notice: str | None = None
        """What the conversation should say of how the session was opened (once)."""
        self.closed = False
        self.last_used = time.monotonic()
        """When its last turn ended (or it started): an idle session is ended."""

    @property
    def busy(self) -> bool:
        """In a turn now."""
        return self.client.turn is not None

    @property
    def alive(self) -> bool:
        return not self.closed and self.process is not None and self.process.returncode is None

    async def start(self, earlier: str | None = None) -> None:
        """Start the process, ``initialize`` and ``session/load`` of ``earlier`` (where the
        agent can) or ``session/new``; :class:`AgentGone` if it exits or does not answer
        within the start timeout."""
        # The mark: a killed server's next start ends what this leaves running.
        env = {**os.environ, **dict(self.command.env), **this_servers_mark()}
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.command.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self._cwd,
                limit=READ_LIMIT,
                start_new_session=True,
            )
        except OSError as e:
            raise AgentGone(f"could not be started: {e.strerror or e}") from e
        assert self.process.stdin is not None and self.process.stdout is not None
        self._drain = asyncio.ensure_future(self._keep_stderr())
        client = cast("Client", self.client)  # the SDK's Protocol, met method by method
        self._conn = ClientSideConnection(client, self.process.stdin, self.process.stdout)
        try:
            await asyncio.wait_for(self._open(earlier), self._start_timeout)
        except asyncio.TimeoutError as e:
            raise AgentGone(f"did not answer within {self._start_timeout:g} s") from e

    async def _open(self, earlier: str | None) -> None:
        conn = self._conn
        assert conn is not None
        try:
            started = await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                    terminal=self.client.offers_terminals,
                ),
                client_info=Implementation(name="jupyter-loop", version="1"),
            )
            capabilities = started.agent_capabilities
            mcp = capabilities.mcp_capabilities if capabilities else None
            http = bool(mcp and mcp.http)
            servers: list[Any] = []
            if http and self._mcp is not None:
                url, token = self._mcp
                header = HttpHeader(name="Authorization", value=f"Bearer {token}")
                servers.append(
                    HttpMcpServer(type="http", name="jupyter-loop", url=url, headers=[header])
                )
                self.reaches_tools = True
            if earlier and capabilities is not None and capabilities.load_session:
                try:
                    await conn.load_session(cwd=self._cwd, session_id=earlier, mcp_servers=servers)
                except RequestError as e:
                    self.resumed = f"refused: {e}"
                else:
                    self.resumed, self.session_id = "loaded", earlier
                    return
            elif earlier:
                self.resumed = "unsupported"
            opened = await conn.new_session(cwd=self._cwd, mcp_servers=servers)
        except ConnectionError as e:
            await self._reaped()
            raise AgentGone(self.why_gone()) from e
        except RequestError as e:
            raise AgentRefused(self._refusal(e)) from e
        self.session_id = opened.session_id

    async def prompt(self, text: str) -> PromptResponse:
        """One turn; :class:`AgentGone` if the process dies meanwhile."""
        if self._conn is None or not self.alive:
            raise AgentGone(self.why_gone())
        try:
            return await self._conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
        except ConnectionError as e:
            await self._reaped()
            raise AgentGone(self.why_gone()) from e
        except RequestError as e:
            raise AgentRefused(self._refusal(e)) from e

    async def _reaped(self, seconds: float = 2.0) -> None:
        """Give a process whose output closed a moment to exit, so its status is known."""
        if self.process is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.process.wait(), seconds)

    async def cancel(self) -> None:
        """``session/cancel`` (a notification: the prompt then ends ``cancelled``)."""
        if self._conn is not None and self.alive:
            with contextlib.suppress(Exception):
                await self._conn.cancel(session_id=self.session_id)

    def why_gone(self) -> str:
        """What to tell people when the process is gone: its status and last stderr line."""
        process = self.process
        code = process.returncode if process is not None else None
        lines = self._stderr.decode("utf-8", "replace").splitlines()
        if self._stderr_trimmed:  # its first line may start anywhere, in a secret say
            lines = lines[1:]
        said = [line.strip() for line in lines]
        said = [line for line in said if line]
        # The last line that starts as an error does ("Error: …", as a Rust agent's
        # before its backtrace, whose frames may name error types too, or Node's before
        # its stack), else the last line (a Python traceback's exception).
        errors = [line for line in said if line.lower().startswith("error")]
        words = self._shown((errors or said)[-1]) if said else ""
        last = f' Its last words: "{words}".' if words else ""
        status = "stopped unexpectedly" if code is None else f"exited with status {code}"
        return f"{status}.{last}"

    def _refusal(self, error: RequestError) -> str:
        """What to tell people of an error the agent answered: its words (the details its
        error's data gives, as Qwen Code's and Codex's do, else the error's message)."""
        data = error.data if isinstance(error.data, dict) else {}
        given = next((data[k] for k in ("details", "message") if isinstance(data.get(k), str)), "")
        words = self._shown(given.strip() or str(error))
        if error.code == AUTH_REQUIRED:
            return (
                f'is not signed in: it answered "{words}". Sign it in on the server (as its '
                "own documentation says), then try again."
            )
        return f"answered with an error: {words}"

    def _shown(self, words: str) -> str:
        """The agent's ``words`` as a message quotes them: masked whole, then cut."""
        masker = self.client.scope.masker
        return (masker.mask(words) if masker is not None else words)[:WORDS_SHOWN]

    async def _keep_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while True:
            chunk = await self.process.stderr.read(4096)
            if not chunk:
                return
            self._stderr += chunk
            if len(self._stderr) > STDERR_KEPT:
                del self._stderr[:-STDERR_KEPT]
                self._stderr_trimmed = True

    async def close(self) -> None:
        """Revoke the session's token, then end its process (every way it may be).

        The token goes first: an agent being ended (idle, replaced, or the server
        stopping) can no longer reach the notebook through our endpoint in the seconds
        its process takes to stop, and once the process is gone so is its access."""
        if self.closed:
            return
        self.closed = True
        self._on_close()
        try:
            await self.client.close()  # the commands it ran, before the agent itself
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._conn.close(), 2)
            await self._end_process()
        finally:
            if self._drain is not None:
                self._drain.cancel()

    async def _end_process(self) -> None:
        process = self.process
        if process is None:
            return
        if process.returncode is None and process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.close()
        for sent in (signal.SIGTERM, signal.SIGKILL):
            try:
                await asyncio.wait_for(process.wait(), 2)
            except asyncio.TimeoutError:
                pass
            else:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sent)  # the group: a launcher's children too
        # The group may outlive its leader (a launcher that exited first).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.wait(), 2)
