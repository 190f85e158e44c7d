"""A real server SIGKILLed mid-run, with saving held back: the output journal brings back
every line that reached the server, in the file and in the reopened notebook."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_ydoc import YNotebook
from loop_helpers import notebook_json, wait_for
from pycrdt import Map, Provider

from jupyter_loop.cli.ychannel import TabChannel
from jupyter_loop.testing.server_process import ServerProcess
from jupyter_loop.testing.yjs import disagreements, read_with_yjs

LOOP = "import time\nfor i in range(2000):\n    print(i, flush=True)\n    time.sleep(0.05)"
# Saving is held back for the whole test: without the journal, the file would keep none of
# the run's lines through the crash.
LINES_PER_COMMIT = 6  # 0.2 s of the loop's lines, and a little for the fsync
NO_SAVES = (
    "--JupyterLoopApp.save_interval=3600",
    "--YDocExtension.document_save_delay=3600",
)


@pytest.fixture(params=["saves held back", "saves every 0.5 s"])
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    # With saves, the file holds the run's first lines too: the replay must replace them,
    # not add to them.
    process = ServerProcess(tmp_path, *(NO_SAVES if request.param == "saves held back" else ()))
    yield process
    process.kill()


def printed(outputs: Any) -> list[int]:
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("name") == "stdout")
    return [int(line) for line in text.split()]


async def start_with_notebook(
    server: ServerProcess, path: str, source: str
) -> tuple[TabChannel, YNotebook]:
    """The server started on a one-cell notebook with its kernel; a tab's channel to it."""
    server.root.mkdir(parents=True)
    (server.root / path).write_text(notebook_json(source), encoding="utf-8")
    server.start()
    await server.ready()
    await server.start_kernel(path)
    return await server.open_room(path)


async def run_first_cell(server: ServerProcess, path: str) -> None:
    body = {"path": path, "cell_ids": ["c0"]}
    await server.api("api", "jupyter-loop", "runs", method="POST", body=body)


async def runs_over(server: ServerProcess, path: str) -> None:
    """Return once the server lists no run of ``path``: its runs are over for every client."""
    while (await server.api("api", "jupyter-loop", "runs?path=" + path))["cells"]:
        pass


SHORT = "import time\nfor i in range(12):\n    print(i, flush=True)\n    time.sleep(0.01)"


async def ran_then_killed(server: ServerProcess, path: str, source: str = SHORT) -> YNotebook:
    """The one-cell notebook started, its cell run to its count in a tab, then a SIGKILL
    before anything else; the tab's notebook as it was."""
    channel, live = await start_with_notebook(server, path, source)
    async with Provider(live.ydoc, channel):
        await wait_for(lambda: live.cell_number == 1)
        await run_first_cell(server, path)
        await wait_for(lambda: live.get_cell(0).get("execution_count") is not None, timeout=60)
        await runs_over(server, path)
        server.kill()
    return live


@pytest.mark.timeout(180)
async def test_a_crash_loses_no_line_that_reached_the_server(server: ServerProcess):
    path = "crash.ipynb"
    channel, live = await start_with_notebook(server, path, LOOP)
    async with Provider(live.ydoc, channel):
        await wait_for(lambda: live.cell_number == 1)
        await run_first_cell(server, path)
        await wait_for(lambda: len(printed(live.get_cell(0)["outputs"])) >= 60, timeout=60)
        seen = printed(live.get_cell(0)["outputs"])
        server.kill()
    assert seen == list(range(len(seen)))
    # The file (and our journal) must carry the outputs through a crash. The YStore is
    # jupyter-collaboration's cache, written in batches, that may or may not have kept
    # them: without it the test sees only what jupyter-loop guarantees.
    server.ystore.unlink()

    server.start()
    await server.ready()
    after = await wait_for(
        lambda: (nb := server.saved(path)) and "restart" in str(nb.cells[0].outputs) and nb,
        timeout=60,
    )
    kept = printed(after.cells[0].outputs)
    # Every line is in the file, in order, then the note, up to the last journal commit:
    # a tab sees a line within 0.05 s, the journal has it within 0.2 s (4 lines here).
    assert kept == list(range(len(kept)))
    assert len(kept) >= len(seen) - LINES_PER_COMMIT, (len(kept), len(seen))
    assert "cut off by a restart" in after.cells[0].outputs[-1]["text"]

    channel, reopened = await server.open_room(path)
    async with Provider(reopened.ydoc, channel):
        await wait_for(lambda: reopened.cell_number == 1)
        assert printed(reopened.get_cell(0)["outputs"]) == kept
    # The replayed journal goes once the store holds the replay: a second restart then
    # replays nothing again.
    journals = server.home / "data" / "jupyter_loop" / "journal"
    await wait_for(lambda: not list(journals.glob("*.jsonl")), timeout=20)


async def test_a_finished_runs_journal_goes_once_its_notebook_is_saved(
    tmp_path: Path, write_notebook, read_notebook, start_kernel, run_cells
):
    path = write_notebook("done.ipynb", "for i in range(3):\n    print(i)")
    await start_kernel(path)
    journals = tmp_path / "jupyter_loop" / "journal"
    await run_cells(path, "c0")
    saved = await wait_for(lambda: (nb := read_notebook(path)) and nb.cells[0].outputs and nb)
    assert saved.cells[0].outputs[0]["text"] == "0\n1\n2\n"
    await wait_for(lambda: journals.is_dir() and not list(journals.glob("*.jsonl")))


@pytest.mark.timeout(180)
async def test_a_crash_right_after_a_run_ends_keeps_all_its_lines(server: ServerProcess):
    """A run the tabs saw end (its count shown, ``GET runs`` no longer listing it) keeps
    every line through a kill that comes at once, before any save (found by chaos.py)."""
    path = "short.ipynb"
    live = await ran_then_killed(server, path)
    assert printed(live.get_cell(0)["outputs"]) == list(range(12))
    server.ystore.unlink()
    server.start()
    await server.ready()
    channel, reopened = await server.open_room(path)
    async with Provider(reopened.ydoc, channel):
        await wait_for(lambda: reopened.cell_number == 1)
        await wait_for(lambda: reopened.get_cell(0)["outputs"], timeout=30)
        outputs = reopened.get_cell(0)["outputs"]
        assert printed(outputs) == list(range(12))
        assert "cut off" not in str(outputs)


def journal_of(journals: Path, cell_id: str) -> Path | None:
    """The output journal of ``cell_id``'s run (its first line names the cell)."""
    for path in journals.glob("*.jsonl") if journals.is_dir() else ():
        try:
            with path.open(encoding="utf-8") as file:
                if f'"cell_id": "{cell_id}"' in file.readline():
                    return path
        except FileNotFoundError:  # removed meanwhile
            continue
    return None


@pytest.mark.timeout(180)
@pytest.mark.parametrize("dies", ["the server", "the server and its kernel"])
async def test_a_crash_between_the_save_of_a_finished_run_and_its_ledger_drop_keeps_it(
    tmp_path: Path, dies: str
):
    """A run ended, and the next cell's printing saved the notebook, so the ended run's
    journal went, while the run ledger still listed it (its line leaves half a second
    after the end). A kill in between must not make the restart take it for a run in
    flight and replay nothing over its lines, from the keeper's journal or as cut off
    (chaos seed 2028, trial 69). Saves every 0.05 s here: the next cell's first output
    saves the notebook well before the ledger's line goes."""
    server = ServerProcess(tmp_path, "--JupyterLoopApp.save_interval=0.05")
    try:
        path = "saved.ipynb"
        server.root.mkdir(parents=True)
        (server.root / path).write_text(notebook_json(SHORT, LOOP), encoding="utf-8")
        server.start()
        await server.ready()
        await server.start_kernel(path)
        channel, live = await server.open_room(path)
        journals = server.home / "data" / "jupyter_loop" / "journal"
        async with Provider(live.ydoc, channel):
            await wait_for(lambda: live.cell_number == 2)
            body = {"path": path, "cell_ids": ["c0", "c1"]}
            await server.api("api", "jupyter-loop", "runs", method="POST", body=body)
            first = await wait_for(lambda: journal_of(journals, "c0"))
            await wait_for(lambda: journal_of(journals, "c1"))
            # The first run's journal goes once a save holds it whole: kill right then.
            await wait_for(lambda: not first.exists(), interval=0.002)
            server.crash() if dies == "the server" else server.kill()
        assert printed(live.get_cell(0)["outputs"]) == list(range(12))
        server.start()
        await server.ready()
        await server.api("api", "jupyter-loop", "runs?path=" + path)  # after the take-up
        channel, reopened = await server.open_room(path)
        async with Provider(reopened.ydoc, channel):
            await wait_for(lambda: reopened.cell_number == 2)
            outputs = reopened.get_cell(0)["outputs"]
            assert printed(outputs) == list(range(12)) and "cut off" not in str(outputs)
        await wait_for(lambda: printed(server.saved(path).cells[0].outputs) == list(range(12)))
    finally:
        server.kill()


@pytest.mark.timeout(180)
async def test_a_run_asked_for_as_the_server_comes_back_replaces_the_replayed_one(
    server: ServerProcess,
):
    """A run queued while the restarted server still replays the journal of the cell's
    last run writes over the replay, not after it (chaos seed 2029, trial 232: the cell
    showed the replayed lines, then the new run's)."""
    path = "again.ipynb"
    await ran_then_killed(server, path)
    server.start()
    await server.ready()
    await server.start_kernel(path)
    await run_first_cell(server, path)  # at once: the replay may not have begun
    await runs_over(server, path)  # the new run is over
    channel, reopened = await server.open_room(path)
    async with Provider(reopened.ydoc, channel):
        await wait_for(lambda: reopened.cell_number == 1)
        outputs = reopened.get_cell(0)["outputs"]
        assert printed(outputs) == list(range(12))
        assert "cut off" not in str(outputs)


@pytest.mark.timeout(240)
async def test_a_run_closed_at_a_restart_is_closed_again_when_a_kill_beats_the_store(
    tmp_path: Path,
):
    """A restarted server closes the run the last one left in flight; a kill before the
    store holds that close must leave the run listed, for the next start to close again
    (chaos seed 2031, trial 151: the cell stayed ``[*]`` for good). The second server's
    store writes every 5 s here (its rooms load no faster), so the kill comes first."""
    path = "closing.ipynb"
    first = ServerProcess(tmp_path)
    try:
        channel, live = await start_with_notebook(first, path, LOOP)
        async with Provider(live.ydoc, channel):
            await wait_for(lambda: live.cell_number == 1)
            await run_first_cell(first, path)
            await wait_for(lambda: len(printed(live.get_cell(0)["outputs"])) >= 10, timeout=60)
            first.kill()
    finally:
        first.kill()

    slow_store = ServerProcess(tmp_path, "--CompactSQLiteYStore.write_interval=5")
    try:
        slow_store.start()
        await slow_store.ready()
        await wait_for(
            lambda: (nb := slow_store.saved(path)) and "cut off" in str(nb.cells[0].outputs),
            timeout=60,
        )
        slow_store.kill()
    finally:
        slow_store.kill()

    cell, _ = await reopened_after_take_up(tmp_path, path)
    assert "cut off" in str(cell["outputs"])


async def reopened_after_take_up(tmp_path: Path, path: str) -> tuple[dict[str, Any], Any]:
    """The first cell of the one-cell notebook ``path`` as a new server shows it once its
    take-up has ended the cell's run, and as the file holds it then."""
    server = ServerProcess(tmp_path)
    try:
        server.start()
        await server.ready()
        await server.api("api", "jupyter-loop", "runs?path=" + path)  # after the take-up
        channel, reopened = await server.open_room(path)
        async with Provider(reopened.ydoc, channel):
            await wait_for(lambda: reopened.cell_number == 1)
            board = reopened.ydoc.get("jupyter_loop:execution", type=Map)
            await wait_for(lambda: (board.get("c0") or {}).get("state") == "done", timeout=20)
            cell = reopened.get_cell(0)
        return cell, server.saved(path).cells[0]
    finally:
        server.kill()


SLOW = "import time\nfor i in range(12):\n    print(i, flush=True)\n    time.sleep(0.5)"
SLOW_STORE = "--CompactSQLiteYStore.write_interval=5"


@pytest.mark.timeout(240)
async def test_a_replayed_run_is_replayed_again_when_a_kill_beats_the_store(tmp_path: Path):
    """A restarted server replays a run that ended just before a kill and saves it; a
    second kill before the store holds the replay's end leaves the store showing the run
    in flight. The third start must replay it again, not take the file's whole output for
    a run cut off (chaos seed 2040, trial 935: the note "cut off by a restart" under all
    of the run's lines) or leave it ``[*]``. Both stores here write every 5 s: the first
    holds the run started, not ended; the second holds nothing of the replay."""
    path = "twice.ipynb"
    first = ServerProcess(tmp_path, SLOW_STORE, *NO_SAVES)
    try:
        await ran_then_killed(first, path, SLOW)
    finally:
        first.kill()

    second = ServerProcess(tmp_path, SLOW_STORE)
    try:
        second.start()
        await second.ready()
        await wait_for(
            lambda: (nb := second.saved(path)) and printed(nb.cells[0].outputs) == list(range(12)),
            timeout=60,
        )
        second.kill()  # within the store's 5 s: it holds nothing of the replay
    finally:
        second.kill()

    cell, saved = await reopened_after_take_up(tmp_path, path)
    assert printed(cell["outputs"]) == list(range(12)) and "cut off" not in str(cell["outputs"])
    assert cell.get("execution_count") == 1
    assert "cut off" not in str(saved.outputs)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("store", ["store kept", "store deleted"])
async def test_a_file_checked_out_while_the_server_was_down_is_not_written_over(
    server: ServerProcess, store: str
):
    """A run ended, the server died before anything held its end (no save, and here maybe
    no store), and while it was down the notebook was checked out (another version of the
    file, without that run's lines). The file came last: the restart closes the run but
    puts none of its journalled lines over the checked-out cell (chaos seed 2034, trial
    44: the replay wrote them over a checkout made just after the restart)."""
    path = "checked.ipynb"
    await ran_then_killed(server, path)
    if store == "store deleted":
        server.ystore.unlink()
    checkout = server.root / (path + ".checkout")
    checkout.write_text(notebook_json("print('the checked-out version')"), encoding="utf-8")
    os.replace(checkout, server.root / path)

    server.start()
    await server.ready()
    await runs_over(server, path)  # answered once the runs left behind are taken up
    channel, reopened = await server.open_room(path)
    async with Provider(reopened.ydoc, channel):
        await wait_for(lambda: reopened.cell_number == 1)
        cell = reopened.get_cell(0)
        assert cell["source"] == "print('the checked-out version')"
        assert cell["outputs"] == []
        assert cell.get("execution_state") != "running"
        # What a browser tab reads of it: the same, applied with Yjs.
        (seen,) = read_with_yjs({"tab": [reopened.ydoc.get_update()]}).values()
        assert disagreements(reopened.ydoc, seen) == []
    saved = server.saved(path)
    assert saved.cells[0].source == "print('the checked-out version')"
    assert saved.cells[0].outputs == []
