"""The registry entry of a kept kernel: one owner-only directory per kernel.

``<data_dir>/kernels/<kernel_id>/`` holds ``entry.json`` (what a server needs to adopt
the kernel: its connection info, the keeper's and the kernel's process ids, its notebook,
the server the keeper answers to), ``iopub/<msg_id>.jsonl`` (the journal of one execute
request, see :mod:`.journal`) and ``kernel.log`` (the kernel's stdout and stderr: the
server's terminal may be gone). The entry is rewritten whole, atomically, by whoever
changes it: the provisioner when it launches the keeper, the keeper when the kernel runs
or ends, a server that adopts the kernel (its own process id).

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> entry = KeeperEntry("k1", "python3", {"ip": "127.0.0.1"}, server_pid=1)
    >>> write_entry(root / "k1", entry)
    >>> read_entry(root / "k1") == entry
    True
    >>> [e.kernel_id for e in list_entries(root)]
    ['k1']
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..owner_only import replace_private
from ..state_files import Damaged, DamagedFiles, expect, open_or_set_aside
from .identity import same_process

ENTRY = "entry.json"
SEGMENTS = "iopub"
KERNEL_LOG = "kernel.log"

STARTING, RUNNING, EXITED, ORPHANED = "starting", "running", "exited", "orphaned"
"""Where a kept kernel is: launched, running, ended on its own (it died, or a server shut
it down), shut down by its keeper because no server came back in time."""
PORTS_TAKEN = "ports-taken"
"""Ended by its keeper at its start: another process had taken a port it was given
(``process.Keeper``); its next start needs new ports (``provisioner``)."""


@dataclass(frozen=True)
class KeeperEntry:
    kernel_id: str
    kernel_name: str
    connection: dict[str, Any]
    server_pid: int
    keeper_pid: int | None = None
    kernel_pid: int | None = None
    pgid: int | None = None
    notebook: str = ""  # the session name (a notebook's path) the kernel was started for
    cwd: str = ""
    state: str = STARTING
    exit_code: int | None = None
    orphan_timeout: float = 600.0
    max_journal_bytes: int = 100 * 2**20
    masking: dict[str, Any] = field(default_factory=dict)  # see ``journal.masker_from``
    # When each process named above started (``identity``): an id another process took
    # since is not the one recorded. ``None``: written before they were recorded.
    keeper_started: float | None = None
    kernel_started: float | None = None
    server_started: float | None = None

    def with_changes(self, **changes: Any) -> KeeperEntry:
        return replace(self, **changes)


def write_entry(directory: Path, entry: KeeperEntry) -> None:
    """Replace the entry atomically (a reader never sees half of it)."""
    replace_private(directory / ENTRY, json.dumps(asdict(entry)))


FIELD_TYPES: dict[str, Any] = {
    "kernel_id": str, "kernel_name": str, "connection": dict, "server_pid": int,
    "keeper_pid": (int, type(None)), "kernel_pid": (int, type(None)),
    "pgid": (int, type(None)), "notebook": str, "cwd": str, "state": str,
    "exit_code": (int, type(None)), "orphan_timeout": (int, float),
    "max_journal_bytes": int, "masking": dict,
    "keeper_started": (int, float, type(None)), "kernel_started": (int, float, type(None)),
    "server_started": (int, float, type(None)),
}  # fmt: skip
"""What each field of an entry is: an entry with another type was not written by us."""


def parse_entry(raw: Any) -> KeeperEntry:
    """An entry from its JSON; :class:`~jupyter_loop.state_files.Damaged` if it is not one.

    Fields a later version adds are ignored; a field of the wrong type is damage (a pid
    that is not a number would reach ``os.kill``)."""
    expect(raw, dict, "entry")
    known = {name: raw[name] for name in FIELD_TYPES if name in raw}
    for name, value in known.items():
        expect(value, FIELD_TYPES[name], name)
    try:
        return KeeperEntry(**known)
    except TypeError as e:  # a field it must have is missing
        raise Damaged(str(e)) from None


def read_entry(directory: Path) -> KeeperEntry | None:
    """The entry in ``directory``; ``None`` if there is none or it cannot be read (the
    keeper's view: only a server moves a damaged entry aside, :func:`list_entries`)."""
    try:
        return _load_entry(directory / ENTRY)
    except (OSError, ValueError, TypeError):
        return None


def _load_entry(path: Path) -> KeeperEntry | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return parse_entry(json.loads(text))


def list_entries(root: Path, damaged: DamagedFiles | None = None) -> list[KeeperEntry]:
    """Every readable entry under ``root`` (the kernels directory); with ``damaged``, an
    entry that cannot be read is moved aside there (its kernel is not adopted)."""
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.iterdir()):
        if not path.is_dir():
            continue
        if damaged is None:
            entry = read_entry(path)
        else:
            try:
                entry = open_or_set_aside(path / ENTRY, _load_entry, damaged)
            except OSError:
                entry = None
        if entry is not None:
            found.append(entry)
    return found


def keeper_is_ours(entry: KeeperEntry, directory: Path) -> bool:
    """Whether the entry's keeper still runs, as the process recorded (``identity``): its
    start time, and its command line holding its kernel directory."""
    return same_process(entry.keeper_pid, entry.keeper_started, command_holds=str(directory))


def kernel_is_ours(entry: KeeperEntry) -> bool:
    """Whether the entry's kernel still runs, as the keeper's child it recorded."""
    return same_process(entry.kernel_pid, entry.kernel_started, parent=entry.keeper_pid)


def server_is_alive(entry: KeeperEntry) -> bool:
    """Whether the server the entry names still runs (not a process that took its id)."""
    return same_process(entry.server_pid, entry.server_started)


def remove_kernel_dir(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)


def process_alive(pid: int | None) -> bool:
    """Whether a process with this id runs (a zombie counts as gone)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process took the id: alive, but not ours
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) is all we can tell
