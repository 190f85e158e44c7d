"""A process whose event loop stopped with AnyIO worker threads idle still exits."""

from __future__ import annotations

import subprocess
import sys

import pytest

# A task that lives on (as a room's does) asked AnyIO for a worker thread; the loop stops
# with it pending, as a server's does on SIGTERM.
SCRIPT = """
import asyncio, sys
import anyio.to_thread
if sys.argv[1] == "released":
    from jupyter_loop.stopping import release_worker_threads_at_exit
    release_worker_threads_at_exit()

async def room():
    await anyio.to_thread.run_sync(lambda: None)
    await asyncio.Event().wait()

loop = asyncio.new_event_loop()
loop.create_task(room())
loop.call_later(0.5, loop.stop)
loop.run_forever()
print("loop stopped", flush=True)
"""


def exits(mode: str) -> bool:
    try:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=15
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0 and "loop stopped" in done.stdout


@pytest.mark.parametrize("mode", ["released", "as AnyIO leaves it"])
def test_the_process_exits_once_its_loop_stopped(mode: str):
    if mode == "as AnyIO leaves it":
        # What this guards against: without the release, Python waits for the idle worker
        # forever. If AnyIO starts stopping its workers itself, this case says so.
        assert not exits(mode), "AnyIO now stops idle workers at exit: the release can go"
    else:
        assert exits(mode)
