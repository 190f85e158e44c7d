"""An ACP session's terminals: the commands an agent runs on the server (``terminal/*``).

Offered only to a session whose person has Jupyter's terminals right
(:attr:`jupyter_loop.access.rights.Ability.TERMINAL`) in a mode that may run code: a
terminal is what a person with that right could open in JupyterLab, so the agent gets no
more than its person. A command runs as the server's user (as Jupyter's terminals do) in
the notebook's folder (or a folder the agent names inside the server's root), in a process
group of its own, so that :meth:`Terminals.close` ends it with everything it started when
the session ends.

What the agent reads of a command's output is masked whole, then cut to the agent's
``outputByteLimit`` from the beginning, at a character boundary ("mask before you cut": a
secret cut in two would no longer be recognised). The raw output kept is bounded too
(:data:`KEPT_BYTES`); it is trimmed by whole lines only, for the same reason.

Rejected: Jupyter's own terminals (terminado): a pseudo-terminal sends escape sequences and
echo an agent does not want, and a terminal the agent opened would show in every person's
terminal list.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..secrets import SecretMasker
from .left_running import this_servers_mark

KEPT_BYTES = 4 * 2**20
"""Raw output kept of one command at most (its oldest lines go first)."""
Record = Callable[..., None]
"""Journals one action of the turn that started the command (``record(action, **details)``)."""


@dataclass(frozen=True)
class TerminalRequest:
    """A command as the agent asked it (``terminal/create``), its folder already checked."""

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    output_byte_limit: int | None


@dataclass(frozen=True)
class TerminalOutput:
    """What the agent is told of a command: its output (masked, then cut) and how it ended."""

    output: str
    truncated: bool
    exit_code: int | None
    signal: str | None
    exited: bool


class Terminal:
    """One command's process and its output so far."""

    def __init__(self, terminal_id: str, request: TerminalRequest, record: Record) -> None:
        self.id = terminal_id
        self.request = request
        self._record = record
        self.process: asyncio.subprocess.Process | None = None
        self._raw = bytearray()
        self._trimmed = False
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.request.argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=self.request.cwd,
            env={**os.environ, **self.request.env, **this_servers_mark()},  # (left_running)
            start_new_session=True,
        )
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        process = self.process
        assert process is not None and process.stdout is not None
        while True:
            chunk = await process.stdout.read(65536)
            if not chunk:
                break
            self._raw += chunk
            if len(self._raw) > KEPT_BYTES:
                self._trim()
        await process.wait()
        self._record(
            "terminal_exit",
            terminal_id=self.id,
            exit_code=process.returncode,
            output_bytes=len(self._raw),
        )

    def _trim(self) -> None:
        """Drop the oldest whole lines: a secret on a line is kept whole or not at all."""
        cut = self._raw.find(b"\n", len(self._raw) - KEPT_BYTES)
        del self._raw[: cut + 1 if cut >= 0 else len(self._raw)]
        self._trimmed = True

    def output(self, masker: SecretMasker | None) -> TerminalOutput:
        text = self._raw.decode("utf-8", "replace")
        if masker is not None:
            text = masker.mask(text)  # whole, before any cut
        truncated = self._trimmed
        limit = self.request.output_byte_limit
        encoded = text.encode("utf-8")
        if limit is not None and len(encoded) > limit:
            # From the beginning, at a character boundary: a partial first character goes.
            text = encoded[len(encoded) - limit :].decode("utf-8", "ignore")
            truncated = True
        code, sent = self._status()
        return TerminalOutput(text, truncated, code, sent, self.exited)

    @property
    def exited(self) -> bool:
        """Ended, and all of its output read."""
        return self._reader is not None and self._reader.done()

    def _status(self) -> tuple[int | None, str | None]:
        code = self.process.returncode if self.process is not None and self.exited else None
        if code is None:
            return None, None
        if code < 0:
            return None, signal.Signals(-code).name
        return code, None

    async def wait(self) -> tuple[int | None, str | None]:
        if self._reader is not None:
            await asyncio.shield(self._reader)
        return self._status()

    async def kill(self) -> None:
        """End the command and everything it started (its process group)."""
        process = self.process
        if process is None or self.exited:
            return
        for sent in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sent)
            try:
                await asyncio.wait_for(asyncio.shield(process.wait()), 2)
            except asyncio.TimeoutError:
                continue
            break
        # The group may outlive its leader (a child that ignored SIGTERM, or went on).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if self._reader is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._reader), 2)


class Terminals:
    """A session's terminals by id; all of them end with the session."""

    def __init__(self, masker: SecretMasker | None) -> None:
        self._masker = masker
        self._terminals: dict[str, Terminal] = {}
        self._made = 0

    async def create(self, request: TerminalRequest, record: Record) -> str:
        self._made += 1
        terminal = Terminal(f"term-{self._made}", request, record)
        await terminal.start()  # OSError: the caller says so to the agent
        self._terminals[terminal.id] = terminal
        return terminal.id

    def get(self, terminal_id: str) -> Terminal | None:
        return self._terminals.get(terminal_id)

    def output(self, terminal: Terminal) -> TerminalOutput:
        return terminal.output(self._masker)

    async def release(self, terminal_id: str) -> None:
        """Kill the command if it still runs, and forget it (ACP's ``terminal/release``)."""
        terminal = self._terminals.pop(terminal_id, None)
        if terminal is not None:
            await terminal.kill()

    def pids(self) -> list[int]:
        """The process ids of the commands still running (for the tests)."""
        return [
            t.process.pid
            for t in self._terminals.values()
            if t.process is not None and not t.exited
        ]

    async def close(self) -> None:
        """End every command (the session ends)."""
        terminals = list(self._terminals.values())
        self._terminals.clear()
        await asyncio.gather(*(t.kill() for t in terminals), return_exceptions=True)


def argv_of(command: str, args: list[str] | None) -> tuple[str, ...]:
    """The program and its arguments; a command with no arguments is a shell line (agents
    send ``"ls -la | head"`` as the command alone), run by ``/bin/sh -c``."""
    if args:
        return (command, *args)
    return ("/bin/sh", "-c", command)


def described(request: TerminalRequest) -> dict[str, Any]:
    """What the journal keeps of a command (masked by the journal)."""
    return {"command": list(request.argv), "cwd": request.cwd}
