"""A kernel given a port another process took meanwhile starts again on new ports.

jupyter_client picks free ports and closes them; the kernel binds them a second later.
On a busy server (on CI, two suites side by side) another process takes one now and then
(CI at 6854091: ``ZMQError: Address already in use`` in the kernel's log, and the cell
waited for good). ipykernel 7 does not exit then, so nothing restarted it; and a restart
would have used the taken port again (jupyter_client's port cache). A cell asked for
meanwhile never reached the kernel: it runs on the kernel's next start. The fault is made
certain by a provisioner set in the server's configuration (``testing.taken_port``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kept_helpers import ended_in_file, run, started
from loop_fixtures import Serve

from jupyter_loop.keeper.adoption import KeptKernels
from jupyter_loop.keeper.registry import PORTS_TAKEN, RUNNING, KeeperEntry, list_entries
from jupyter_loop.testing.taken_port import NAME

CONFIG = f"""
from jupyter_loop.testing.taken_port import register
register()
c.KernelProvisionerFactory.default_provisioner_name = {NAME!r}
"""


@pytest.mark.timeout(120)
async def test_a_kernel_whose_port_was_taken_starts_again_and_runs_the_cell(loop_serve: Serve):
    server = loop_serve()
    (server.home / "config").mkdir(parents=True)
    (server.home / "config" / "jupyter_server_config.py").write_text(CONFIG, encoding="utf-8")
    await started(server, "print('ran')")
    await run(server, "c0")  # asked while the kernel hangs: it runs once it started again
    saved = await ended_in_file(server, 0, timeout=60)
    assert saved.cells[0].outputs[0]["text"] == "ran\n"
    assert saved.cells[0].execution_count == 1
    log = "".join(p.read_text(errors="replace") for p in server.home.glob("server-*.log"))
    assert "restarting kernel (1/5)" in log and "(2/5)" not in log  # once, on new ports
    assert [entry.state for entry in list_entries(server.kernels_dir)] == [RUNNING]


def test_a_kernel_ended_on_a_taken_port_counts_as_one_that_died(tmp_path: Path) -> None:
    """A server that comes back after a crash finds the kernel's keeper gone: its runs get
    the note of a kernel that died, not of one killed with its keeper."""
    ended = KeeperEntry("k1", "python3", {}, server_pid=1, state=PORTS_TAKEN)
    kept = KeptKernels(tmp_path, ended={"k1": ended})
    assert kept.how_ended("k1") == "exited"
