"""A kept kernel's entry names processes by id; an id taken by another process is not ours.

Fault injection through the data directory only: an entry whose keeper and kernel ids are
those of unrelated live processes (what a keeper that died leaves once its ids are
reused), and a keeper whose server's id is an unrelated live process.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from loop_fixtures import Serve

from jupyter_loop.keeper.provisioner import KeeperProvisioner
from jupyter_loop.keeper.registry import (
    ORPHANED,
    RUNNING,
    KeeperEntry,
    process_alive,
    read_entry,
    write_entry,
)
from jupyter_loop.testing.server_process import free_port

KERNEL_ID = "0f0e0d0c-0b0a-4909-8807-060504030201"


@pytest.fixture
def strangers() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Two unrelated processes, each leading its own process group (as a keeper does)."""
    made = [
        subprocess.Popen(["sleep", "300"], start_new_session=True),
        subprocess.Popen(["sleep", "300"], start_new_session=True),
    ]
    yield made
    for process in made:
        process.kill()
        process.wait()


def connection() -> dict[str, object]:
    ports = {f"{name}_port": free_port() for name in ("shell", "iopub", "stdin", "control", "hb")}
    return {**ports, "ip": "127.0.0.1", "key": "k", "transport": "tcp",
            "signature_scheme": "hmac-sha256", "kernel_name": "python3"}  # fmt: skip


def dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


@pytest.mark.timeout(180)
@pytest.mark.parametrize("recorded", ["before start times", "with start times"])
async def test_an_entry_whose_processes_are_strangers_is_not_adopted_nor_signalled(
    loop_serve: Serve, strangers: list[subprocess.Popen[bytes]], recorded: str
):
    server = loop_serve()
    keeper, kernel = strangers
    times = {}
    if recorded == "with start times":  # the ids' first holders started a minute earlier
        times = {
            "keeper_started": psutil.Process(keeper.pid).create_time() - 60,
            "kernel_started": psutil.Process(kernel.pid).create_time() - 60,
        }
    entry = KeeperEntry(
        KERNEL_ID, "python3", connection(), server_pid=dead_pid(),
        keeper_pid=keeper.pid, kernel_pid=kernel.pid, pgid=keeper.pid, state=RUNNING,
        notebook="a.ipynb",
    )  # fmt: skip
    write_entry(server.kernels_dir / KERNEL_ID, entry)
    if times:  # written as a server of this version writes them
        path = server.kernels_dir / KERNEL_ID / "entry.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **times}))
    server.start()
    await server.ready()
    assert [k["id"] for k in await server.api("api", "kernels")] == []
    server.stop(timeout=30)  # a shutdown ends every kernel it has
    assert keeper.poll() is None and kernel.poll() is None  # never signalled


async def test_a_provisioner_does_not_signal_a_keeper_whose_id_was_taken(
    tmp_path: Path, strangers: list[subprocess.Popen[bytes]]
):
    """The keeper died after its kernel was adopted and another process took its id."""
    stranger, _ = strangers
    entry = KeeperEntry(
        KERNEL_ID, "python3", connection(), server_pid=os.getpid(),
        keeper_pid=stranger.pid, pgid=stranger.pid, state=RUNNING,
        keeper_started=psutil.Process(stranger.pid).create_time() - 60,
    )  # fmt: skip
    provisioner = KeeperProvisioner(kernel_id=KERNEL_ID, directory=str(tmp_path))
    provisioner.adopt(entry)
    assert await provisioner.poll() is not None  # gone, as far as the kernel goes
    assert not provisioner.has_process
    await provisioner.send_signal(signal.SIGINT)
    await provisioner.terminate()
    await provisioner.kill()
    await asyncio.wait_for(provisioner.wait(), 5)
    time.sleep(0.2)
    assert stranger.poll() is None


@pytest.mark.timeout(60)
def test_a_keeper_whose_server_id_was_taken_ends_its_kernel_at_the_orphan_timeout(
    tmp_path: Path, strangers: list[subprocess.Popen[bytes]]
):
    """The server died; another process took its id: the keeper must not wait for it."""
    stranger, _ = strangers
    directory = tmp_path / KERNEL_ID
    entry = KeeperEntry(
        KERNEL_ID, "python3", connection(), server_pid=stranger.pid,
        server_started=psutil.Process(stranger.pid).create_time() - 60, orphan_timeout=1.0,
    )  # fmt: skip
    write_entry(directory, entry)
    root = str(Path(__file__).resolve().parents[2])
    kernel = [sys.executable, "-c", "import time; time.sleep(300)"]
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); " \
        "from jupyter_loop.keeper.process import main; sys.exit(main(sys.argv[1:]))"  # fmt: skip
    keeper = subprocess.Popen(
        [sys.executable, "-c", code, root, str(directory), "--", *kernel], start_new_session=True
    )
    try:
        running = wait_for_sync(lambda: (e := read_entry(directory)) and e.kernel_pid and e, 20)
        # The timeout (1 s), a shutdown request nobody answers (5 s), then SIGTERM.
        ended = wait_for_sync(lambda: (e := read_entry(directory)) and e.state == ORPHANED, 30)
        assert ended and not process_alive(running.kernel_pid)
        assert stranger.poll() is None
    finally:
        keeper.kill()
        keeper.wait()


def wait_for_sync(check, timeout: float):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s")
