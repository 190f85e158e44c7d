"""Processes an ACP session started that outlived a killed server, ended at the next start.

A server stopped normally ends each agent's process group with its session. A server
that is killed (SIGKILL, the OOM killer) ends nothing: Qwen Code exits when its input
closes, but codex-acp 0.16.0 does not, and a launcher's children (or a terminal command
an agent asked for) may outlive their parent whatever it does. Each such process holds
memory, and may hold the user's files open, until the machine restarts.

So every process an ACP session starts (the agent, a terminal command) carries in its
environment the server process that started it (:data:`MARK`: its id and start time),
which each process it starts in turn inherits. At start, the server ends every process of
its user whose mark names a server that no longer runs; a process whose server still runs
(another Jupyter server of the same user) is left alone.

Rejected: a file listing the process groups started. A group outlives its leader (a
launcher that exited first), and by the next start a recorded id may name another
process; the environment is inherited by every descendant and names the server, whose
identity is checked as the keepers' are (:mod:`jupyter_loop.keeper.identity`).

Example:
    >>> import os
    >>> mark = this_servers_mark()
    >>> server_of({**os.environ, **mark}) == this_process()
    True
    >>> server_of({MARK: "not a mark"}) is None
    True
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import psutil

from ..keeper.identity import ProcessId, same_process, this_process

MARK = "JUPYTER_LOOP_ACP_SERVER"
"""The environment variable naming the server process (``PID:START_TIME``)."""

GRACE_SECONDS = 2.0
"""How long a process left running has to end on SIGTERM before it is killed."""


def this_servers_mark() -> dict[str, str]:
    """The environment entry every process an ACP session starts is given."""
    me = this_process()
    return {MARK: f"{me.pid}:{me.started!r}"}


def server_of(environment: Mapping[str, str]) -> ProcessId | None:
    """The server a process's environment names, ``None`` if it names none (or garbles it)."""
    pid, _, started = environment.get(MARK, "").partition(":")
    try:
        return ProcessId(int(pid), float(started))
    except ValueError:
        return None


def left_running() -> list[psutil.Process]:
    """This user's processes whose mark names a server that no longer runs."""
    found = []
    for process in psutil.process_iter():
        try:
            server = server_of(process.environ())
        except (psutil.Error, OSError):
            continue  # gone, or another user's (whose environment is not ours to read)
        if server is not None and not same_process(server.pid, server.started):
            found.append(process)
    return found


def end_left_running(log: logging.Logger) -> int:
    """End what :func:`left_running` finds (SIGTERM, then SIGKILL); how many it ended."""
    found = left_running()
    for process in found:
        try:
            process.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(found, timeout=GRACE_SECONDS)
    for process in alive:
        try:
            process.kill()
        except psutil.Error:
            pass
    if found:
        names = sorted({_name(process) for process in found})
        log.warning(
            "jupyter-loop ended %d process(es) that ACP sessions of a killed server left "
            "running: %s",
            len(found),
            ", ".join(names),
        )
    return len(found)


def _name(process: psutil.Process) -> str:
    try:
        return str(process.name())
    except psutil.Error:
        return str(process.pid)
