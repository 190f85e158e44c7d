"""Local kernels that outlive the server (``keep_kernels``): a real server process, real
ipykernel, real keepers; the server is SIGKILLed or stopped mid-run and started again."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
from kept_helpers import LINES, LOOP, PATH, ended_in_file, lines_seen, printed, run, started
from loop_fixtures import Serve
from loop_helpers import wait_for
from pycrdt import Map, Provider

from jupyter_loop.execution.durability.ledger import RunLedger
from jupyter_loop.keeper.registry import KeeperEntry, list_entries, process_alive
from jupyter_loop.testing.server_process import ServerProcess


def the_kernel(server: ServerProcess) -> KeeperEntry:
    entries = list_entries(server.kernels_dir)
    assert len(entries) == 1, entries
    return entries[0]


@pytest.mark.timeout(180)
async def test_a_crash_keeps_the_kernel_and_every_line(loop_serve: Serve):
    server = loop_serve()
    kernel_id = await started(server, "x = 41", LOOP, "print(x + 1)")
    await run(server, "c0", "c1")
    await lines_seen(server, 20)
    before = the_kernel(server)
    sessions = await server.api("api", "sessions")
    server.crash()
    await asyncio.sleep(2)  # ~40 lines printed with no server up
    assert process_alive(before.kernel_pid)

    server.start()
    await server.ready()
    channel, live = await server.open_room(PATH)
    async with Provider(live.ydoc, channel):  # a tab opened on the restarted server
        await wait_for(lambda: live.cell_number > 1)
        lines = lambda: printed(live.get_cell(1)["outputs"])  # noqa: E731
        first = len(await wait_for(lines, timeout=30))
        assert first < LINES  # the run was still going: it streams into the tab again
        await wait_for(lambda: len(lines()) == LINES, timeout=60)
        assert lines() == list(range(LINES))
    after = await ended_in_file(server, 1)
    assert printed(after.cells[1].outputs) == list(range(LINES))
    assert "restart" not in json.dumps(after.cells[1].outputs)
    assert the_kernel(server).kernel_pid == before.kernel_pid
    kernels = await server.api("api", "kernels")
    assert [kernel["id"] for kernel in kernels] == [kernel_id]
    # An open tab holds its session id: the session is there, on the same kernel.
    again = await server.api("api", "sessions")
    assert [(s["id"], s["kernel"]["id"]) for s in again] == [(sessions[0]["id"], kernel_id)]

    await run(server, "c2")  # the notebook's session came back with its kernel
    done = await ended_in_file(server, 2)
    assert done.cells[2].outputs[0]["text"] == "42\n"  # x, defined before the crash
    server.kill()


@pytest.mark.timeout(180)
async def test_cells_queued_behind_a_kept_run_run_after_it(loop_serve: Serve):
    # "Run all", then the server crashes: the kept kernel goes on with the running cell,
    # and the restarted server runs the cells that waited behind it, on that kernel.
    server = loop_serve()
    await started(server, "x = 41", LOOP, "print(x + 1)")
    await run(server, "c0", "c1", "c2")
    await lines_seen(server, 20)
    server.crash()
    await asyncio.sleep(1)

    server.start()
    await server.ready()
    done = await ended_in_file(server, 2, timeout=90)
    assert done.cells[2].outputs[0]["text"] == "42\n"  # the same kernel, after the loop
    assert printed(done.cells[1].outputs) == list(range(LINES))
    assert done.cells[2].execution_count == done.cells[1].execution_count + 1
    server.kill()


def crash_once_a_run_ended(server: ServerProcess, timeout: float = 30) -> None:
    """SIGKILL the server the moment a run's end reaches the output journal: the run
    ledger (which drops an ended run 0.5 s later) still lists the run then."""
    journal = server.home / "data" / "jupyter_loop" / "journal"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in journal.glob("*") if journal.is_dir() else ():
            try:
                if b'{"end":' in path.read_bytes():
                    server.crash()
                    return
            except FileNotFoundError:
                pass  # the journal went with a save: look again
        time.sleep(0.001)
    raise TimeoutError("no run ended in the output journal")


@pytest.mark.timeout(240)
async def test_a_run_that_ended_just_before_a_crash_keeps_every_line(loop_serve: Serve):
    # Chaos seed 1127, trials 19 and 24: the server died after a run's end was journalled
    # and before its ledger said so; the restarted server followed the run again on its
    # kept kernel, which had nothing more to say: the cell came back empty ("cut off"), or
    # never ended.
    server = loop_serve()
    # 0.6 s: the ledger has recorded the run's request to the kernel before it ends
    await started(
        server, "import time\nfor i in range(30):\n    print(i, flush=True)\n    time.sleep(0.02)"
    )
    ledger = RunLedger(server.home / "data" / "jupyter_loop" / "runs.jsonl", logging.getLogger())
    for _attempt in range(8):  # until the kill lands between the two writes
        await run(server, "c0")
        await asyncio.to_thread(crash_once_a_run_ended, server)
        listed = ledger.load()
        server.start()
        await server.ready()
        if listed:
            break
        await ended_in_file(server, 0)
    else:
        pytest.fail("the kill never came between the journal's end and the ledger's write")
    done = await ended_in_file(server, 0)
    assert printed(done.cells[0].outputs) == list(range(30))
    assert all(output.get("name") == "stdout" for output in done.cells[0].outputs)
    server.kill()


def crash_once_the_store_changes(server: ServerProcess, timeout: float = 30) -> None:
    """SIGKILL the server the moment its collaboration store changes: a run's markers
    (``[*]``) are kept there then, and the run ledger (which used to write 0.2 s after a
    change) did not list the run yet."""
    files = [server.ystore, server.ystore.with_name(server.ystore.name + "-wal")]

    def state() -> list[tuple[int, int]]:
        found = []
        for file in files:
            try:
                stat = file.stat()
                found.append((stat.st_mtime_ns, stat.st_size))
            except FileNotFoundError:
                found.append((0, 0))
        return found

    before = state()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if state() != before:
            server.crash()
            return
        time.sleep(0.0005)
    raise TimeoutError("the collaboration store never changed")


@pytest.mark.timeout(240)
async def test_a_run_killed_with_its_server_at_once_is_followed_on_its_kept_kernel(
    loop_serve: Serve,
):
    # Chaos seed 2027, trial 22: a cell left [*] after a SIGKILL under load. The run's
    # markers reached the collaboration store, and its request the kernel, before the
    # run ledger wrote it down; the restarted server knew of no such run, so nothing
    # closed the markers or followed the kernel, which went on printing to nobody.
    server = loop_serve()
    await started(
        server, "import time\nfor i in range(60):\n    print(i, flush=True)\n    time.sleep(0.05)"
    )
    channel, live = await server.open_room(PATH)
    async with Provider(live.ydoc, channel):
        await wait_for(lambda: live.cell_number)
        await asyncio.sleep(1.5)  # the store has what the room opened with
        killer = asyncio.create_task(asyncio.to_thread(crash_once_the_store_changes, server))
        await run(server, "c0")
        await killer
    server.start()
    await server.ready()
    done = await ended_in_file(server, 0)
    assert printed(done.cells[0].outputs) == list(range(60))
    server.kill()


@pytest.mark.timeout(180)
async def test_a_prompt_left_by_a_crash_is_answered_on_the_kept_kernel(loop_serve: Serve):
    # The cell waits in input() when the server dies: the kept kernel still waits, the
    # restarted server shows the same prompt, and an answer reaches the same kernel.
    server = loop_serve()
    await started(
        server,
        "x = 41",
        "print('before', flush=True)\nname = input('name? ')\nprint('hello', name, x)",
    )
    await run(server, "c0", "c1")

    async def prompt() -> dict[str, Any]:
        channel, live = await server.open_room(PATH)
        async with Provider(live.ydoc, channel):
            board = live.ydoc.get("jupyter_loop:execution", type=Map)
            marker = lambda: (board.get("c1") or {}).get("input")  # noqa: E731
            return dict(await wait_for(marker, timeout=60))

    before = await prompt()
    await asyncio.sleep(1)  # the run ledger has recorded the request (within 0.2 s)
    server.crash()
    await asyncio.sleep(1)
    server.start()
    await server.ready()
    request = await prompt()
    assert request == before  # the same prompt, still waiting
    body = {"path": PATH, "cell_id": "c1", "request_id": request["request_id"], "value": "Ada"}
    await server.api("api", "jupyter-loop", "input", method="POST", body=body)
    done = await ended_in_file(server, 1)
    texts = [(o["name"], o["text"]) for o in done.cells[1].outputs]
    assert texts == [
        ("stdout", "before\n"),
        ("stdin", "name?  Ada\n"),
        ("stdout", "hello Ada 41\n"),
    ]
    server.kill()


@pytest.mark.timeout(180)
async def test_a_prompt_asked_after_a_crash_is_shown_and_answered(loop_serve: Serve):
    # The cell reaches input() only once the restarted server follows it again. The
    # kernel sends its prompt to the connection that sent the cell, known by its session
    # id: the previous server's. It was lost, and the cell waited with no prompt anywhere.
    server = loop_serve()
    waits = "import pathlib, time\nwhile not pathlib.Path('go').exists():\n    time.sleep(0.05)\n"
    await started(server, waits + "name = input('name? ')\nprint('hello', name)")
    await run(server, "c0")
    await asyncio.sleep(1)  # the run ledger has recorded the request (within 0.2 s)
    server.crash()
    server.start()
    await server.ready()
    await server.api("api", "jupyter-loop", "status")  # answered once the run is followed
    (server.root / "go").touch()
    channel, live = await server.open_room(PATH)
    async with Provider(live.ydoc, channel):
        board = live.ydoc.get("jupyter_loop:execution", type=Map)
        marker = lambda: (board.get("c0") or {}).get("input")  # noqa: E731
        request = dict(await wait_for(marker, timeout=60))
    assert request["prompt"] == "name? "
    body = {"path": PATH, "cell_id": "c0", "request_id": request["request_id"], "value": "Ada"}
    await server.api("api", "jupyter-loop", "input", method="POST", body=body)
    done = await ended_in_file(server, 0)
    texts = [(o["name"], o["text"]) for o in done.cells[0].outputs]
    assert texts == [("stdin", "name?  Ada\n"), ("stdout", "hello Ada\n")]
    server.kill()


@pytest.mark.timeout(180)
async def test_a_display_shown_before_a_crash_is_updated_after_it(loop_serve: Serve):
    updates = (
        "import time\nh = display('a', display_id=True)\nprint('shown', flush=True)\n"
        "time.sleep(6)\nh.update('b')\nprint('updated')"
    )
    server = loop_serve()
    await started(server, updates)
    await run(server, "c0")
    channel, live = await server.open_room(PATH)
    async with Provider(live.ydoc, channel):
        await wait_for(lambda: live.cell_number > 0)
        await wait_for(lambda: len(live.get_cell(0)["outputs"]) >= 2, timeout=60)
    await asyncio.sleep(1)  # the run ledger has recorded the request (within 0.2 s)
    server.crash()
    server.start()
    await server.ready()
    done = await ended_in_file(server, 0)
    shown = [o.get("data", {}).get("text/plain") or o.get("text") for o in done.cells[0].outputs]
    assert shown == ["'b'", "shown\nupdated\n"]  # the display updated in place
    server.kill()


@pytest.mark.timeout(120)
async def test_a_clean_stop_shuts_kernels_down_by_default(loop_serve: Serve):
    server = loop_serve()
    await started(server, "x = 1")
    entry = the_kernel(server)
    server.stop(leave_kernels=True)
    await wait_for(lambda: not process_alive(entry.kernel_pid), timeout=10)
    assert not process_alive(entry.keeper_pid)
    assert not list_entries(server.kernels_dir)


@pytest.mark.timeout(180)
async def test_always_keeps_kernels_across_a_clean_stop(loop_serve: Serve):
    server = loop_serve("--JupyterLoopApp.keep_kernels=always")
    await started(server, "x = 41", LOOP, "print(x + 1)", "print(x + 2)")
    await run(server, "c0", "c1", "c3")  # c3 waits behind the loop through the upgrade
    await lines_seen(server, 20)
    before = the_kernel(server)
    server.stop(leave_kernels=True)  # an upgrade: SIGTERM
    await asyncio.sleep(1)
    assert process_alive(before.kernel_pid)

    server.start()
    await server.ready()
    after = await ended_in_file(server, 1)
    assert printed(after.cells[1].outputs) == list(range(LINES))
    assert the_kernel(server).kernel_pid == before.kernel_pid
    queued = await ended_in_file(server, 3)
    assert queued.cells[3].outputs[0]["text"] == "43\n"
    await run(server, "c2")
    done = await ended_in_file(server, 2)
    assert done.cells[2].outputs[0]["text"] == "42\n"
    server.kill()


@pytest.mark.timeout(180)
async def test_never_ends_kernels_with_the_server(loop_serve: Serve):
    server = loop_serve("--JupyterLoopApp.keep_kernels=never")
    await started(server, "x = 1")
    assert not list_entries(server.kernels_dir)  # no keeper: today's kernels
    server.kill()


@pytest.mark.timeout(180)
async def test_an_orphaned_kernel_is_shut_down_and_its_output_replayed(
    loop_serve: Callable[..., ServerProcess],
):
    server = loop_serve("--JupyterLoopApp.orphan_kernel_timeout=2")
    forever = "import time\nfor i in range(100000):\n    print(i, flush=True)\n    time.sleep(0.05)"
    await started(server, "x = 1", forever)
    await run(server, "c1")
    await lines_seen(server, 10)
    entry = the_kernel(server)
    server.crash()
    crashed = time.monotonic()
    await wait_for(lambda: not process_alive(entry.kernel_pid), timeout=30)
    # The timeout, then the shutdown request (ipykernel answers it within a second).
    assert time.monotonic() - crashed < 2 + 1 + 8
    await wait_for(lambda: not process_alive(entry.keeper_pid), timeout=5)

    server.start()
    await server.ready()
    after = await wait_for(
        lambda: (nb := server.saved(PATH)) and "orphan" in json.dumps(nb.cells[1].outputs) and nb,
        timeout=60,
    )
    kept = printed(after.cells[1].outputs)
    assert kept == list(range(len(kept))) and len(kept) >= 30, kept[-5:]
    assert "no Jupyter server came back" in after.cells[1].outputs[-1]["text"]
    await wait_for(lambda: not list_entries(server.kernels_dir))
    server.kill()


@pytest.mark.timeout(180)
async def test_an_adopted_kernel_is_interrupted_and_restarted_as_any(
    loop_serve: Callable[..., ServerProcess],
):
    server = loop_serve()
    forever = "import time\nfor i in range(100000):\n    print(i, flush=True)\n    time.sleep(0.05)"
    kernel_id = await started(server, "x = 41", forever, "print(x + 1)")
    await run(server, "c0", "c1")
    await lines_seen(server, 10)
    before = the_kernel(server)
    server.crash()
    server.start()
    await server.ready()
    await lines_seen(server, 100)  # followed again

    await server.api("api", "kernels", kernel_id, "interrupt", method="POST", body={})
    interrupted = await ended_in_file(server, 1)
    assert "KeyboardInterrupt" in json.dumps(interrupted.cells[1].outputs)
    assert process_alive(before.kernel_pid)
    await run(server, "c2")
    assert (await ended_in_file(server, 2)).cells[2].outputs[0]["text"] == "42\n"

    await server.api("api", "kernels", kernel_id, "restart", method="POST", body={})
    await wait_for(lambda: not process_alive(before.kernel_pid), timeout=30)
    restarted = await wait_for(
        lambda: (e := list_entries(server.kernels_dir)) and process_alive(e[0].kernel_pid) and e[0],
        timeout=60,
    )
    assert restarted.kernel_id == kernel_id and restarted.kernel_pid != before.kernel_pid
    server.kill()


@pytest.mark.timeout(180)
async def test_a_kernel_that_dies_while_no_server_runs_is_reported_in_its_cell(
    loop_serve: Callable[..., ServerProcess],
):
    server = loop_serve()
    dies = LOOP.replace(str(LINES), "60") + "\nimport os\nos._exit(1)"
    await started(server, dies)
    await run(server, "c0")
    channel, live = await server.open_room(PATH)
    async with Provider(live.ydoc, channel):
        await wait_for(lambda: live.cell_number == 1)
        await wait_for(lambda: len(printed(live.get_cell(0)["outputs"])) >= 10, timeout=60)
    entry = the_kernel(server)
    server.crash()
    await wait_for(lambda: not process_alive(entry.kernel_pid), timeout=30)

    server.start()
    await server.ready()
    after = await wait_for(
        lambda: (nb := server.saved(PATH)) and "died" in json.dumps(nb.cells[0].outputs) and nb,
        timeout=60,
    )
    assert printed(after.cells[0].outputs) == list(range(60))
    assert (
        "The kernel died while no Jupyter server was running" in after.cells[0].outputs[-1]["text"]
    )
    assert await server.api("api", "kernels") == []
    await wait_for(lambda: not list_entries(server.kernels_dir))  # replayed: it goes
    server.kill()
