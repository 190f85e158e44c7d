"""Whether a process id still names the process an entry recorded, not one that took the id.

A process id is reused once its process is gone: a keeper that died while no server ran
leaves an entry whose ``keeper_pid`` may, by the next start, be any process of the user.
Adopting it as a kernel and then interrupting or restarting it signalled that process and
its whole group (two unrelated processes were killed); a keeper whose server's id was
taken waited for that process forever and never shut its orphaned kernel down. So every
process an entry names is recorded with its start time (``psutil``'s ``create_time``:
the kernel's count of ticks since boot, the same for every reader of one boot), and
checked before it is adopted, signalled or waited for:

- the keeper: its start time, and its command line, which holds its kernel directory
  (unique per kernel id; an entry written before start times were recorded is checked by
  this alone);
- the kernel: its start time and its parent (the keeper);
- the server a keeper answers to: its start time.

Rejected: a token in the keeper's environment (``/proc/PID/environ`` is readable by the
owner only, as the command line is not, but it needs no more than the directory already
gives), and ``pidfd`` (held by one process: the next server has none).

Example:
    >>> import os
    >>> me = this_process()
    >>> me.pid == os.getpid(), same_process(me.pid, me.started)
    (True, True)
    >>> same_process(me.pid, me.started - 60)  # a process of the same id, started before
    False
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import psutil

TOLERANCE = 0.05
"""Seconds two readings of one process's start time may differ by (they are read from one
tick count, 10 ms apart at most; a process that took the id started later than that)."""


@dataclass(frozen=True)
class ProcessId:
    """A process as an entry records it: its id and when it started."""

    pid: int
    started: float | None


def started_at(pid: int | None) -> float | None:
    """When process ``pid`` started (seconds since the epoch); ``None`` if there is none."""
    if not pid:
        return None
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, OSError, ValueError):
        return None


def this_process() -> ProcessId:
    pid = psutil.Process().pid
    return ProcessId(pid, started_at(pid))


def same_process(
    pid: int | None,
    started: float | None,
    *,
    command_holds: str | None = None,
    parent: int | None = None,
) -> bool:
    """Whether ``pid`` runs (not a zombie) and is the process recorded: it started at
    ``started`` (unless ``None``: not recorded), its command line has an argument
    ``command_holds``, its parent is ``parent`` (when given)."""
    if not pid:
        return False
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            if process.status() == psutil.STATUS_ZOMBIE:
                return False
            if started is not None and abs(process.create_time() - started) > TOLERANCE:
                return False
            if parent is not None and process.ppid() != parent:
                return False
            if command_holds is not None and not _holds(process.cmdline(), command_holds):
                return False
    except (psutil.Error, OSError):
        return False  # gone, or another user's: not the process recorded
    return True


def _holds(command: list[str], argument: str) -> bool:
    """Whether ``command`` has ``argument``, spelled as given or as the same path."""
    if argument in command:
        return True
    real = os.path.realpath(argument)
    return any(os.path.realpath(part) == real for part in command if os.sep in part)
