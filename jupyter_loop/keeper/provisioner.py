"""Our kernel provisioner: launches a keeper, which launches the kernel.

jupyter_client creates a provisioner for every kernel it starts; which one comes from the
kernel spec (``metadata.kernel_provisioner``) or else from
``KernelProvisionerFactory.default_provisioner_name``, which jupyter-loop sets to ours
unless ``keep_kernels`` is ``never`` or the admin chose another. Kernel specs that name a
provisioner of their own keep it (their kernels are not kept).

It is jupyter_client's local provisioner with one change: the process it launches is
the keeper (``python -m jupyter_loop.keeper``) with the kernel's command after ``--``.
Signals go to the process group, which holds the keeper and the kernel: an interrupt
reaches the kernel, a kill ends both. A server that adopts a kept kernel builds this
provisioner from the registry entry (:meth:`adopt`): it has no ``Popen`` then, and tells
whether the kernel lives from the keeper's process id. Subclassing jupyter_client's
provisioner (rather than writing a kernel manager of our own) leaves the server's
kernel manager, and any the admin configured, untouched.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, cast

from jupyter_client.connect import KernelConnectionInfo, LocalPortCache
from jupyter_client.provisioning import KernelProvisionerFactory, LocalProvisioner
from traitlets import Dict, Float, Int, Unicode

from .identity import this_process
from .journal import SECRETS_ON_STDIN, SUFFIX
from .registry import (
    PORTS_TAKEN,
    SEGMENTS,
    KeeperEntry,
    keeper_is_ours,
    read_entry,
    remove_kernel_dir,
    write_entry,
)

NAME = "jupyter-loop-keeper"
PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "hb_port", "control_port")
ENTRY_POINT = "jupyter_loop.keeper.provisioner:KeeperProvisioner"


def register() -> None:
    """Make the provisioner known to jupyter_client even where the package's entry point
    is not installed (a source checkout run without reinstalling)."""
    factory = KernelProvisionerFactory
    if NAME not in factory.provisioners:
        factory.provisioners[NAME] = EntryPoint(NAME, ENTRY_POINT, factory.GROUP_NAME)


def json_safe(connection: dict[str, Any]) -> dict[str, Any]:
    """Connection info with its bytes (the key) as text, for the entry."""
    return {k: v.decode() if isinstance(v, bytes) else v for k, v in connection.items()}


def keeper_command() -> list[str]:
    """How to start a keeper: this interpreter, this copy of the package (a source
    checkout runs its own keeper). The path goes on ``sys.path``, not in ``PYTHONPATH``:
    the kernel inherits the keeper's environment and must not import the server's
    packages."""
    root = str(Path(__file__).resolve().parents[2])
    code = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "from jupyter_loop.keeper.process import main; sys.exit(main(sys.argv[1:]))"
    )
    return [sys.executable, "-c", code]


class KeeperProvisioner(LocalProvisioner):
    """Launches the kernel under a keeper that outlives the server (see module doc)."""

    directory = Unicode("", config=True, help="Where kept kernels' directories go.")
    orphan_timeout = Float(600.0, config=True, help="See JupyterLoopApp.orphan_kernel_timeout.")
    max_journal_bytes = Int(100 * 2**20, config=True, help="Bound of a kernel's journal.")
    masking = Dict(config=True, help="The server's masking settings, for the journal.")

    @property
    def kernel_dir(self) -> Path:
        return Path(self.directory) / str(self.kernel_id)

    _adopted: KeeperEntry | None = None  # the entry of a kernel a previous server launched
    _ports_taken = False  # the kernel's keeper ended it on a taken port: restart on new ones

    @property
    def has_process(self) -> bool:
        return self.process is not None or self._keeper_runs()

    def _keeper_runs(self) -> bool:
        """Whether an adopted kernel's keeper still runs, as the process its entry recorded
        (``identity``): its id may have been taken since it died."""
        adopted = self._adopted
        if adopted is None or self.pid is None:
            return False
        return keeper_is_ours(adopted, self.kernel_dir)

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        if self._ports_taken:
            self._ports_taken = False
            self._forget_ports()
        kwargs = await super().pre_launch(**kwargs)
        env = kwargs.get("env") or {}
        remove_kernel_dir(self.kernel_dir)  # a restart's kernel journals afresh
        entry = KeeperEntry(
            kernel_id=str(self.kernel_id),
            kernel_name=str(getattr(self.parent, "kernel_name", "") or ""),
            connection=json_safe(dict(self.connection_info)),
            server_pid=os.getpid(),
            server_started=this_process().started,
            notebook=str(env.get("JPY_SESSION_NAME", "")),
            cwd=str(kwargs.get("cwd") or ""),
            orphan_timeout=self.orphan_timeout,
            max_journal_bytes=self.max_journal_bytes,
            # The secrets go to the keeper on its standard input, never into the entry.
            masking={**self.masking, "secrets": [], SECRETS_ON_STDIN: True},
        )
        write_entry(self.kernel_dir, entry)
        kwargs["cmd"] = [*keeper_command(), str(self.kernel_dir), "--", *kwargs["cmd"]]
        return kwargs

    def _forget_ports(self) -> None:
        """New ports for this start: the last one's keeper found one of them taken.

        jupyter_client's restarter asks for new random ports when a kernel dies young, but
        with its port cache (on by default) the provisioner keeps the ports it chose first
        and the connection file that holds them: the kernel would start on the taken port
        again, and fail again, five times."""
        manager = self.parent
        if manager is None:
            return
        cache = LocalPortCache.instance()
        for name in PORT_NAMES:
            port = int(getattr(manager, name, 0) or 0)
            if port > 0:
                cache.return_port(port)
                setattr(manager, name, 0)
        self.ports_cached = False
        manager.cleanup_connection_file()

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        """Launch the keeper, and hand it the secrets to mask on its standard input."""
        kwargs["stdin"] = subprocess.PIPE  # jupyter_client would close it at once
        info = await super().launch_kernel(cmd, **kwargs)
        assert self.process is not None and self.process.stdin is not None
        secrets = [str(value) for value in self.masking.get("secrets", [])]
        try:
            self.process.stdin.write(json.dumps(secrets).encode())
            self.process.stdin.close()
        except OSError:  # the keeper ended at once: its exit is seen as the kernel's
            pass
        return info

    def adopt(self, entry: KeeperEntry) -> None:
        """Follow a kernel a previous server launched (no ``Popen``: process ids only,
        checked against the entry's record before each signal)."""
        self._adopted = entry
        self.pid = entry.keeper_pid
        self.pgid = entry.pgid
        self.ip = entry.connection.get("ip")
        self.connection_info = cast(KernelConnectionInfo, entry.connection)

    async def poll(self) -> int | None:
        if self.process is not None:
            return await super().poll()
        return None if self._keeper_runs() else 0

    async def wait(self) -> int | None:
        if self.process is not None:
            return await super().wait()
        while self._keeper_runs():
            await asyncio.sleep(0.1)
        self.pid = None
        return 0

    async def send_signal(self, signum: int) -> None:
        if self.process is not None:
            await super().send_signal(signum)
            return
        if not self._keeper_runs():
            return  # gone, or its id is another process's now: never signal that one
        if self.pgid and self.pgid == self.pid:  # the keeper leads its group
            try:
                os.killpg(self.pgid, signum)
                return
            except OSError:
                pass
        if self.pid:
            os.kill(self.pid, signum)

    async def kill(self, restart: bool = False) -> None:
        if self.process is not None:
            await super().kill(restart)
            return
        try:
            await self.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            pass

    async def terminate(self, restart: bool = False) -> None:
        if self.process is not None:
            await super().terminate(restart)
            return
        try:
            await self.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass

    async def cleanup(self, restart: bool = False) -> None:
        """The kernel was shut down by a server: nothing of it is to be recovered (but
        whether its keeper found a port taken, for the restart's ports)."""
        if restart:
            ended = read_entry(self.kernel_dir)
            self._ports_taken = ended is not None and ended.state == PORTS_TAKEN
        await super().cleanup(restart)
        remove_kernel_dir(self.kernel_dir)

    def forget_request(self, msg_id: str) -> None:
        """An execute request's outputs are in the output journal: its IOPub journal goes."""
        try:
            (self.kernel_dir / SEGMENTS / f"{msg_id}{SUFFIX}").unlink(missing_ok=True)
        except OSError:
            pass
