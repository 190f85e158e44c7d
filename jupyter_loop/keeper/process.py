"""The keeper process: the parent of one kernel, its IOPub journal and its lifeline.

Started by :class:`~.provisioner.KeeperProvisioner` as
``python -m jupyter_loop.keeper <kernel_dir> -- <kernel command>``. It starts the kernel
as its child with ``JPY_PARENT_PID`` set to itself, so ipykernel's parent poller ends the
kernel when the keeper goes, not when the server does. It reads the kernel's IOPub the
whole time (:mod:`.journal`): what the kernel prints while no server listens is on disk.

It watches the server named in the entry; a server that starts rewrites the entry with
its own process id. When none has been alive for ``orphan_timeout`` seconds, the keeper
asks the kernel to shut down (then terminates, then kills it) and records it as orphaned:
the journal stays for the next server to replay.

A kernel that fails at its start to bind a port it was given (another process took it
between jupyter_client's choice and the bind) is ended, and recorded ``ports-taken``:
ipykernel would hang, not exit, and the provisioner gives its restart new ports.

The keeper shares the kernel's process group: the provisioner signals the group (an
interrupt must reach the kernel), so the keeper ignores SIGINT and passes SIGTERM on.
It imports little (no jupyter_client until it must shut the kernel down): it starts with
every kernel.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import zmq

from ..owner_only import open_private
from .identity import ProcessId, same_process, started_at
from .journal import SECRETS_ON_STDIN, IopubJournal, masker_from
from .kernel_output import KernelOutput
from .registry import (
    EXITED,
    KERNEL_LOG,
    ORPHANED,
    PORTS_TAKEN,
    RUNNING,
    SEGMENTS,
    KeeperEntry,
    read_entry,
    write_entry,
)

POLL_MS = 100
"""Longest wait for an IOPub message before the keeper checks its kernel and server: a
kernel that exits is noticed (and a server's shutdown finishes) within this."""
SERVER_CHECK = 1.0  # seconds between checks that the server is alive
SHUTDOWN_GRACE = 5.0  # seconds a kernel asked to shut down gets before it is terminated


def iopub_url(connection: dict[str, Any]) -> str:
    """Where the kernel publishes IOPub, from its connection info."""
    if connection.get("transport", "tcp") == "ipc":
        return f"ipc://{connection['ip']}-{connection['iopub_port']}"
    return f"tcp://{connection['ip']}:{connection['iopub_port']}"


class Keeper:
    def __init__(
        self, directory: Path, entry: KeeperEntry, command: list[str], secrets: list[str]
    ) -> None:
        self._directory = directory
        self._entry = entry
        self._command = command
        self._server = ProcessId(entry.server_pid, entry.server_started)
        self._orphan_since: float | None = None
        self._terminating = False
        self._kernel: subprocess.Popen[bytes] | None = None
        self._masker = masker_from(entry.masking, secrets)
        self._journal = IopubJournal(directory / SEGMENTS, self._masker, entry.max_journal_bytes)
        self._output: KernelOutput | None = None
        self._heard = False  # the kernel has published on IOPub: its sockets are bound

    def run(self) -> int:
        signal.signal(signal.SIGINT, _ignore)  # the kernel's, sent to the whole group
        signal.signal(signal.SIGTERM, self._on_terminate)
        context = zmq.Context()
        iopub = context.socket(zmq.SUB)
        iopub.setsockopt(zmq.RCVHWM, 0)  # ours unbounded: the kernel never drops for us
        iopub.setsockopt(zmq.SUBSCRIBE, b"")
        iopub.connect(iopub_url(self._entry.connection))  # before the kernel: no first loss
        env = {**os.environ, "JPY_PARENT_PID": str(os.getpid())}
        # The kernel's own output goes through us, masked, into kernel.log.
        read_end, write_end = os.pipe()
        self._kernel = subprocess.Popen(
            self._command, env=env, cwd=self._entry.cwd or None, stdin=subprocess.DEVNULL,
            stdout=write_end, stderr=write_end,
        )  # fmt: skip
        os.close(write_end)
        self._output = KernelOutput(read_end, self._directory / KERNEL_LOG, self._masker)
        self._update(
            keeper_pid=os.getpid(),
            kernel_pid=self._kernel.pid,
            pgid=os.getpgid(0),
            state=RUNNING,
            # Who they are, beyond their ids (``identity``): checked before any signal.
            keeper_started=started_at(os.getpid()),
            kernel_started=started_at(self._kernel.pid),
        )
        state = self._follow(iopub)
        self._drain(iopub, 0.2)  # the kernel's last messages
        self._output.close()
        self._journal.close()
        iopub.close(linger=0)
        context.term()
        self._update(state=state, exit_code=self._kernel.returncode)
        return 0

    def _follow(self, iopub: zmq.Socket[bytes]) -> str:
        """Journal IOPub until the kernel exits; how it ended (exited or orphaned)."""
        assert self._kernel is not None
        next_check = time.monotonic() + SERVER_CHECK
        while self._kernel.poll() is None:
            if iopub.poll(POLL_MS) or self._output is not None:
                self._drain(iopub, 0)
            if self._start_failed():
                print(
                    "jupyter-loop keeper: a port the kernel was given is taken; ending it, "
                    "to be started again on new ports",
                    flush=True,
                )
                self._kernel.kill()
                self._kernel.wait()
                return PORTS_TAKEN
            if time.monotonic() >= next_check:
                next_check = time.monotonic() + SERVER_CHECK
                if self._orphaned():
                    self._shut_down(iopub)
                    return ORPHANED
        return EXITED

    def _start_failed(self) -> bool:
        """Whether the kernel failed to bind a port at its start, before publishing
        anything. ipykernel 7 does not exit then (its threads hold the process), so
        jupyter_client's restarter would wait for its death for good, and every cell sent
        to it would wait for an answer. A kernel already running is never ended so: a
        cell's program may print those words."""
        return not self._heard and self._output is not None and self._output.port_taken

    def _drain(self, iopub: zmq.Socket[bytes], wait: float) -> None:
        if self._output is not None:
            self._output.read()
        deadline = time.monotonic() + wait
        while True:
            try:
                self._journal.record(iopub.recv_multipart(zmq.NOBLOCK))
                self._heard = True
            except zmq.Again:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not iopub.poll(int(remaining * 1000)):
                    return

    def _orphaned(self) -> bool:
        """Whether no server has been alive for the orphan timeout (a process that took
        the server's id is not the server: its start time differs)."""
        if same_process(self._server.pid, self._server.started):
            self._orphan_since = None
            return False
        current = read_entry(self._directory)
        named = current and ProcessId(current.server_pid, current.server_started)
        if named and named != self._server:
            self._server = named  # a new server adopted the kernel
            if same_process(named.pid, named.started):
                self._orphan_since = None
                return False
        now = time.monotonic()
        if self._orphan_since is None:
            self._orphan_since = now
        return now - self._orphan_since >= self._entry.orphan_timeout

    def _shut_down(self, iopub: zmq.Socket[bytes]) -> None:
        """Ask the kernel to shut down, as a server would; then terminate, then kill it."""
        assert self._kernel is not None
        print("jupyter-loop keeper: no server came back; shutting the kernel down", flush=True)
        try:
            _request_shutdown(self._entry.connection)
        except Exception as e:  # a kernel that cannot be asked is terminated below
            print(f"jupyter-loop keeper: shutdown request failed: {e}", flush=True)
        for sig, grace in ((None, SHUTDOWN_GRACE), (signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            if sig is not None and self._kernel.poll() is None:
                self._kernel.send_signal(sig)
            deadline = time.monotonic() + grace
            while self._kernel.poll() is None and time.monotonic() < deadline:
                self._drain(iopub, 0.05)
            if self._kernel.poll() is not None:
                return

    def _on_terminate(self, signum: int, frame: FrameType | None) -> None:
        if self._kernel is not None and self._kernel.poll() is None and not self._terminating:
            self._terminating = True
            self._kernel.send_signal(signal.SIGTERM)

    def _update(self, **changes: Any) -> None:
        # Re-read first: a server may have written its own id since.
        current = read_entry(self._directory) or self._entry
        self._entry = current.with_changes(**changes)
        write_entry(self._directory, self._entry)


def _ignore(signum: int, frame: FrameType | None) -> None:
    return None


def _request_shutdown(connection: dict[str, Any]) -> None:
    """A signed ``shutdown_request`` on the kernel's control channel."""
    from jupyter_client.session import Session

    session = Session(
        key=str(connection.get("key", "")).encode(),
        signature_scheme=str(connection.get("signature_scheme", "hmac-sha256")),
    )
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    control = context.socket(zmq.DEALER)
    url = iopub_url({**connection, "iopub_port": connection["control_port"]})
    control.connect(url)
    session.send(control, "shutdown_request", {"restart": False})
    time.sleep(0.2)  # let ZeroMQ hand the request over before the socket closes
    control.close(linger=1000)


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") != 1:
        print("usage: python -m jupyter_loop.keeper KERNEL_DIR -- KERNEL_COMMAND...")
        return 2
    directory = Path(argv[0])
    entry = read_entry(directory)
    if entry is None:
        print(f"jupyter-loop keeper: no readable entry in {directory}", file=sys.stderr)
        return 2
    # The server's terminal or pipe may go away with it: the kernel and the keeper
    # write to a file of their own, which outlives the server.
    log = open_private(directory / KERNEL_LOG, "ab")
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    return Keeper(directory, entry, argv[2:], secrets_given(entry)).run()


def secrets_given(entry: KeeperEntry) -> list[str]:
    """The secrets the server wrote on our standard input (``provisioner``): they mask
    the journal and the log, and are kept nowhere on disk."""
    if not entry.masking.get(SECRETS_ON_STDIN):
        return []
    try:
        given = json.loads(sys.stdin.buffer.read() or b"[]")
    except (OSError, ValueError):
        return []
    return [str(value) for value in given] if isinstance(given, list) else []
