"""A kept kernel's files on disk hold no configured secret: its ``kernel.log`` (what the
kernel writes to its file descriptors, below Python: ``os.system``, C libraries) is
masked as its outputs are, and its ``entry.json`` does not hold the secrets at all."""

from __future__ import annotations

import json

import pytest
from kept_helpers import ended_in_file, run, started
from loop_fixtures import Serve

from jupyter_loop.keeper.registry import ENTRY, KERNEL_LOG

SECRET = "hunter2-correct-horse-battery"
PRINTS = f"import os\nos.system('echo fd-level {SECRET}')\nos.write(2, b'raw {SECRET}\\n')"


@pytest.mark.timeout(180)
async def test_a_kept_kernels_files_hold_no_secret(loop_serve: Serve):
    server = loop_serve(f"--JupyterLoopApp.secrets={SECRET}")
    kernel_id = await started(server, PRINTS)
    await run(server, "c0")
    await ended_in_file(server, 0)
    directory = server.kernels_dir / kernel_id
    log = (directory / KERNEL_LOG).read_text(errors="replace")
    assert "fd-level ••••••" in log and "raw ••••••" in log, log  # kept, masked
    assert SECRET not in log
    assert SECRET not in (directory / ENTRY).read_text()
    outputs = (await ended_in_file(server, 0)).cells[0].outputs
    assert SECRET not in json.dumps(outputs)  # as before: the outputs too
    server.kill()
