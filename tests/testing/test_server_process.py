"""The test servers' own clean-up (``jupyter_loop.testing.server_process``) kills only
what it started: this machine's process ids wrap at 32,768, and CI runs two suites side
by side, so an id a kept kernel had may be a kernel of another test's by the clean-up."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

from loop_helpers import notebook_json, wait_for
from pycrdt import Map, Provider

from jupyter_loop.keeper.identity import started_at
from jupyter_loop.keeper.registry import KeeperEntry, write_entry
from jupyter_loop.testing.server_process import ServerProcess


def test_a_kept_kernels_id_taken_by_another_process_is_left_alone(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path)
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        pid = stranger.pid
        started = started_at(pid)
        assert started is not None
        # The entry a kernel left: the same id, started a minute before the process that
        # holds the id now.
        earlier = KeeperEntry(
            "k1", "python3", {}, server_pid=1, kernel_pid=pid, kernel_started=started - 60
        )
        write_entry(server.kernels_dir / "k1", earlier)
        server.kill_kept_kernels()
        time.sleep(0.2)
        assert stranger.poll() is None  # not killed
        # The process recorded (its start time) is killed.
        write_entry(server.kernels_dir / "k1", earlier.with_changes(kernel_started=started))
        server.kill_kept_kernels()
        assert stranger.wait(timeout=5) == -9
    finally:
        stranger.kill()
        stranger.wait()


async def test_a_tab_open_on_a_killed_server_closes_without_an_error(tmp_path: Path) -> None:
    """A tab's Y provider drops what it would send while its socket is closed, as
    y-websocket does in a browser. Before, tests that SIGKILLed a server under an open
    tab failed now and then on leaving it: the provider had echoed a Y update into the
    closed socket (CI at fe7d94a, ``test_crash_journal``: "unhandled errors in a
    TaskGroup (2 sub-exceptions)"). An edit after the kill makes that send certain."""
    server = ServerProcess(tmp_path)
    server.root.mkdir(parents=True)
    (server.root / "tab.ipynb").write_text(notebook_json("1"), encoding="utf-8")
    try:
        server.start()
        await server.ready()
        channel, tab = await server.open_room("tab.ipynb")
        async with Provider(tab.ydoc, channel):
            await wait_for(lambda: tab.cell_number == 1)
            server.kill()
            await asyncio.sleep(0.5)  # the socket's close is read
            tab.ydoc.get("meta", type=Map)["edited"] = "after the kill"
            await asyncio.sleep(0.2)
    finally:
        server.kill()
