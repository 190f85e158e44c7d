"""A starting server takes back the kernels whose keepers outlived the last one.

For each live keeper in the registry the server's kernel manager gets a kernel manager
with the original kernel id, built from the entry's connection info, with a
:class:`~.provisioner.KeeperProvisioner` following the keeper by process id: tabs
reconnect to the same kernel id, the REST API lists it, interrupt, restart and shutdown
go through jupyter_client as for any kernel. (jupyter_server's own ``start_kernel`` would
launch a process: the few steps it takes for a started kernel are taken here instead.)
Sessions are kept by jupyter_server in ``sessions.db`` (see ``JupyterLoopApp``), so a
notebook's session comes back with its kernel.

Entries whose keeper is gone (the kernel died, or was shut down by the orphan timeout
while no server ran) are kept as :attr:`KeptKernels.ended` for the recovery to replay.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_server._tz import utcnow

from ..state_files import DamagedFiles
from .identity import this_process
from .journal import SUFFIX
from .provisioner import KeeperProvisioner
from .registry import (
    EXITED,
    ORPHANED,
    PORTS_TAKEN,
    RUNNING,
    SEGMENTS,
    KeeperEntry,
    keeper_is_ours,
    kernel_is_ours,
    list_entries,
    remove_kernel_dir,
    server_is_alive,
    write_entry,
)


@dataclass
class KeptKernels:
    """What a starting server found in the registry."""

    root: Path
    adopted: dict[str, KeeperEntry] = field(default_factory=dict)
    ended: dict[str, KeeperEntry] = field(default_factory=dict)

    def segment(self, kernel_id: str, msg_id: str) -> Path:
        """The IOPub journal of one execute request on a kept kernel."""
        return self.root / kernel_id / SEGMENTS / f"{msg_id}{SUFFIX}"

    def how_ended(self, kernel_id: str) -> str:
        """``orphaned`` (its keeper shut it down), ``exited`` (it died on its own, its
        keeper saw it) or ``killed`` (the keeper went too: the machine's share of
        processes was killed at once)."""
        entry = self.ended.get(kernel_id)
        if entry is not None and entry.state == PORTS_TAKEN:
            return EXITED  # its keeper ended it at its start, as a kernel that died young
        if entry is None or entry.state not in (ORPHANED, EXITED):
            return "killed"
        return entry.state

    def forget_ended(self) -> None:
        """The ended kernels' runs are replayed: their directories go."""
        for kernel_id in self.ended:
            remove_kernel_dir(self.root / kernel_id)
        self.ended.clear()


def adopt_kept_kernels(
    root: Path,
    kernels: Any,
    log: logging.Logger,
    busy: set[str] | None = None,
    damaged: DamagedFiles | None = None,
) -> KeptKernels:
    """Put every kernel whose keeper is alive into ``kernels`` (a mapping kernel manager).

    ``busy``: kernels that had a cell running (shown busy until their next status).
    ``damaged``: where an entry that cannot be read is noted as moved aside.
    """
    found = KeptKernels(root)
    for entry in list_entries(root, damaged or DamagedFiles(log)):
        # Its processes as recorded, not whatever took their ids since (``identity``).
        alive = keeper_is_ours(entry, root / entry.kernel_id) and kernel_is_ours(entry)
        if entry.server_pid != os.getpid() and server_is_alive(entry):
            continue  # another server (same data dir) still follows it
        if not alive or entry.state != RUNNING:
            found.ended[entry.kernel_id] = entry
            continue
        if entry.kernel_id in kernels:
            continue
        try:
            _adopt(entry, kernels, busy or set())
        except Exception:
            log.exception("jupyter-loop could not adopt kept kernel %s", entry.kernel_id)
            continue
        me = this_process()
        write_entry(
            root / entry.kernel_id,
            entry.with_changes(server_pid=me.pid, server_started=me.started),
        )
        found.adopted[entry.kernel_id] = entry
        log.info("jupyter-loop adopted kernel %s (pid %s)", entry.kernel_id, entry.kernel_pid)
    return found


def _adopt(entry: KeeperEntry, kernels: Any, busy: set[str]) -> None:
    kernel_id = entry.kernel_id
    manager = kernels.kernel_manager_factory(
        connection_file=os.path.join(kernels.connection_dir, f"kernel-{kernel_id}.json"),
        parent=kernels,
        log=kernels.log,
        kernel_name=entry.kernel_name,
        kernel_spec_manager=kernels.kernel_spec_manager,
    )
    manager.kernel_id = kernel_id
    manager.load_connection_info(entry.connection)
    manager.write_connection_file()
    try:
        spec = manager.kernel_spec
    except Exception:  # the kernel spec was removed since: the kernel still runs
        spec = None
    provisioner = KeeperProvisioner(kernel_id=kernel_id, kernel_spec=spec, parent=manager)
    provisioner.adopt(entry)
    manager.provisioner = provisioner
    # What a restart relaunches with (jupyter_server passes cwd and the session's env).
    env = {**os.environ, "JPY_SESSION_NAME": entry.notebook}
    manager._launch_args = {"cwd": entry.cwd or None, "env": env}
    ready: Future[None] = Future()
    ready.set_result(None)
    manager._ready = ready
    manager._attempted_start = True  # a restart makes a fresh ``ready`` (this one is done)
    manager.start_restarter()
    manager._connect_control_socket()
    kernels._kernels[kernel_id] = manager
    kernels._kernel_connections[kernel_id] = 0
    kernels._kernel_ports[kernel_id] = manager.ports
    manager.execution_state = "busy" if kernel_id in busy else "idle"
    manager.reason = ""
    manager.last_activity = utcnow()
    kernels.start_watching_activity(kernel_id)
    kernels.add_restart_callback(kernel_id, lambda: kernels._handle_kernel_died(kernel_id), "dead")


def kept_kernel_ids(kernels: Any) -> set[str]:
    """The kernels of ``kernels`` that run under a keeper."""
    if kernels is None:
        return set()
    return {
        kernel_id
        for kernel_id in kernels.list_kernel_ids()
        if isinstance(
            getattr(kernels.get_kernel(kernel_id), "provisioner", None), KeeperProvisioner
        )
    }


def let_kernels_live(kernels: Any, log: logging.Logger) -> int:
    """A clean stop that keeps kernels: take every kept kernel out of ``kernels`` so the
    server's shutdown does not end it; its keeper waits for the next server."""
    kept = 0
    for kernel_id in kept_kernel_ids(kernels):
        manager = kernels.get_kernel(kernel_id)
        manager.stop_restarter()
        kernels.stop_watching_activity(kernel_id)
        manager._close_control_socket()
        kernels._kernels.pop(kernel_id, None)
        kernels._kernel_connections.pop(kernel_id, None)
        kernels._kernel_ports.pop(kernel_id, None)
        kept += 1
    if kept:
        log.info("jupyter-loop leaves %d kernel(s) running for the next server", kept)
    return kept


__all__ = ["KeptKernels", "adopt_kept_kernels", "kept_kernel_ids", "let_kernels_live"]
