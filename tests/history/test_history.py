"""The run history: who started each run of a cell, through what, what it ran and how it
ended (execution/history.py), asked over REST, MCP and read back as stale marks."""

from __future__ import annotations

import asyncio
import json
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from authorizers import both
from loop_helpers import wait_for
from mcp_helpers import NamedUserIdentity, answer_approval, call, text_of
from pycrdt import Map
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

from jupyter_loop.document import set_source, source_hash
from jupyter_loop.execution.history import RunHistory
from jupyter_loop.execution.run_origin import RunEntry, RunOrigin

CANARY = "canary-9d2e7a41b6c8f035"
SOCKET = ("api", "jupyter-loop", "runs", "socket")


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.ServerApp.identity_provider_class = NamedUserIdentity
    return jp_server_config


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {
        "secrets": [CANARY],
        "external_approval_timeout": 60.0,
        "history_max_runs_per_cell": 3,
    }


async def history(api: Any, path: str, cell_id: str | None = None) -> list[dict[str, Any]]:
    query = {"path": path, **({"cell_id": cell_id} if cell_id else {})}
    reply = await api("api", "jupyter-loop", "history", params=query)
    runs: list[dict[str, Any]] = reply["runs"]
    return runs


async def socket_run(jp_ws_fetch: Any, path: str, *cell_ids: str, **extra: Any) -> None:
    socket = await jp_ws_fetch(*SOCKET)
    run = {"path": path, "cell_ids": list(cell_ids), **extra}
    await socket.write_message(json.dumps({"request_id": "r1", "run": run}))
    answered = json.loads(await socket.read_message())
    assert "ticket" in answered, answered
    socket.close()


async def test_a_tab_run_is_recorded_with_who_what_and_how_it_ended(
    write_notebook: Any, start_kernel: Any, open_tab: Any, jp_ws_fetch: Any, api: Any
) -> None:
    path = write_notebook("nb.ipynb", f"token = '{CANARY}'\nprint('hi')", "1 / 0")
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
        before = time.time()
        await socket_run(jp_ws_fetch, path, "c0", "c1", kernel_id=kernel_id)
        await wait_for(lambda: tab.cell("c1").get("execution_count"))
    runs = await history(api, path)
    assert [(r["cell_id"], r["status"]) for r in runs] == [("c1", "error"), ("c0", "ok")]
    ok = runs[1]
    assert ok["by"] == "a tab of ada" and ok["channel"] == "tab" and ok["user"] == "ada"
    assert ok["kernel_id"] == kernel_id
    assert CANARY not in ok["source"] and "print('hi')" in ok["source"]  # masked
    assert ok["source_hash"] == source_hash(ok["source"])  # of what is shown (D22)
    assert before <= ok["queued"] <= ok["started"] <= ok["ended"] <= time.time()
    assert ok["execution_count"] == 1 and len(ok["outputs_digest"]) == 16
    assert [r["cell_id"] for r in await history(api, path, "c1")] == ["c1"]


async def test_run_all_over_post_runs_and_the_per_cell_limit(
    write_notebook: Any, start_kernel: Any, run_cells: Any, api: Any
) -> None:
    path = write_notebook("limit.ipynb", "x = 1", "x + 1")
    await start_kernel(path)
    await run_cells(path, "c0", "c1", started_from="run_all")
    for _ in range(4):  # the limit is 3 runs per cell
        await run_cells(path, "c1")
    runs: list[dict[str, Any]] = []

    async def all_ended() -> bool:  # the last re-run is the kernel's sixth execution
        runs[:] = await history(api, path)
        return any(r["execution_count"] == 6 for r in runs)

    deadline = time.monotonic() + 30
    while not await all_ended():
        assert time.monotonic() < deadline, runs
        await asyncio.sleep(0.2)
    assert sorted(r["execution_count"] for r in runs if r["cell_id"] == "c1") == [4, 5, 6]
    first = next(r for r in runs if r["cell_id"] == "c0")
    assert first["run_all"] and first["by"] == "the runs API for ada, Run All"
    assert all(not r["run_all"] for r in runs if r["cell_id"] == "c1")


async def test_an_interrupted_run_is_recorded_as_interrupted(
    write_notebook: Any, start_kernel: Any, run_cells: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("stop.ipynb", "import time\nprint('go', flush=True)\ntime.sleep(60)")
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: "go" in tab.text("c0"))
        await api("api", "kernels", kernel_id, "interrupt", method="POST", body="")
        await wait_for(lambda: (tab.marker("c0") or {}).get("status") == "error")
        assert tab.cell("c0")["outputs"][-1]["ename"] == "KeyboardInterrupt"  # as in a tab
    runs = await history(api, path, "c0")
    assert [r["status"] for r in runs] == ["interrupted"]


async def test_bad_history_requests_are_4xx(write_notebook: Any, api: Any) -> None:
    write_notebook("nb.ipynb", "1")
    for params, status in (({}, 400), ({"path": "missing.ipynb"}, 404),
                           ({"path": "nb.ipynb", "limit": "x"}, 400)):  # fmt: skip
        with pytest.raises(HTTPClientError) as raised:
            await api("api", "jupyter-loop", "history", params=params)
        assert raised.value.code == status
    with pytest.raises(HTTPClientError) as raised:
        await api("api", "jupyter-loop", "runs", method="POST",
                  body={"path": "nb.ipynb", "cell_ids": ["c0"], "started_from": "me"})  # fmt: skip
    assert raised.value.code == 400


@pytest.mark.parametrize("authorizer", both("NoContents"))
async def test_history_needs_contents_read(write_notebook: Any, api: Any) -> None:
    with pytest.raises(HTTPClientError) as raised:
        await api("api", "jupyter-loop", "history", params={"path": "nb.ipynb"})
    assert raised.value.code == 403


async def test_mcp_runs_are_recorded_and_stale_marks_follow_edits_and_restarts(
    write_notebook: Any, open_tab: Any, loop_mcp_session: Any, api: Any, start_kernel: Any
) -> None:
    path = write_notebook("mcp.ipynb", "print('first')", "print('second')")
    async with open_tab(path) as tab, loop_mcp_session(name="claude-code") as session:
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        running = asyncio.ensure_future(
            call(session, "run_cells", path=path, cell_ids=["c0", "c1"])
        )
        approval = await wait_for(lambda: board.get("approval"))
        await answer_approval(api, path, approval, "once")
        assert not (await running).is_error
        runs = await history(api, path, "c0")
        assert runs[0]["channel"] == "mcp" and runs[0]["client"] == "claude-code"
        assert runs[0]["by"] == 'MCP client "claude-code" for ada'
        assert runs[0]["approval"] == approval["id"]  # the approval that let it run
        told = text_of(await call(session, "cell_history", path=path, cell_id="c0"))
        assert 'MCP client "claude-code" for ada' in told and "print('first')" in told

        fresh = text_of(await call(session, "read_notebook", path=path))
        assert "stale" not in fresh
        ycell = next(c for c in tab.notebook.ycells if c["id"] == "c0")
        set_source(ycell, "print('edited')")  # typed in the tab, synced to the server
        edited = await read_until(session, path, "(stale: edited since this output)")
        assert "(stale: edited" in map_line(edited, "c0")
        assert "stale" not in map_line(edited, "c1")

        sessions = await api("api", "sessions")
        kernel_id = next(s["kernel"]["id"] for s in sessions if s["path"] == path)
        await api("api", "kernels", kernel_id, "restart", method="POST", body="")
        restarted = await read_until(session, path, "kernel restarted since")
        assert "(stale: kernel restarted since this output)" in map_line(restarted, "c1")
        assert "(stale: edited since this output)" in map_line(restarted, "c0")


async def read_until(session: Any, path: str, seen: str, timeout: float = 20) -> str:
    """``read_notebook``'s text once it holds ``seen`` (a tab's edit reaches the server
    on its own time)."""
    deadline = time.monotonic() + timeout
    while True:
        text = text_of(await call(session, "read_notebook", path=path))
        if seen in text:
            return text
        assert time.monotonic() < deadline, text
        await asyncio.sleep(0.2)


def map_line(text: str, cell_id: str) -> str:
    """The notebook map's line of the cell (``number id type ...``)."""
    return next(line for line in text.splitlines() if line.split()[1:2] == [cell_id])


def entry(cell: str, index: int, source: str = "x = 1") -> RunEntry:
    now = time.time()
    origin = RunOrigin("ada", "tab")
    return RunEntry(
        "room", "nb.ipynb", cell, f"run{index}", origin, source_hash(source), source,
        "k1", "k1-start", now, now, now, "ok", execution_count=index, outputs_digest="0" * 16,
    )  # fmt: skip


def test_one_large_batch_leaves_no_log_past_the_budget(tmp_path: Path) -> None:
    """A batch bigger than the log's share used to leave the log at its size until the
    next write (CI: 2.4 MB on disk for a 2 MB budget)."""
    budget = 2 * 1024 * 1024
    store = RunHistory(tmp_path / "history.sqlite3", max_bytes=budget, batch_delay=60)
    try:
        for index in range(3000):  # one batch: ``settle`` writes all that queued
            store.record(entry(f"cell{index % 50}", index, f"x = {index}\n" + "y" * 40))
        store.settle(timeout=60)
        assert store.count() == 3000
        assert store.bytes_used() <= budget
    finally:
        store.close()


def test_the_database_is_private_and_keeps_its_byte_budget(tmp_path: Path) -> None:
    budget = 2 * 1024 * 1024
    store = RunHistory(tmp_path / "h" / "history.sqlite3", max_bytes=budget)
    try:
        for index in range(30_000):
            store.record(entry(f"cell{index % 50}", index, f"x = {index}\n" + "y" * 40))
        store.settle(timeout=60)
        assert store.bytes_used() <= budget
        kept = store.count()
        assert 0 < kept < 30_000
        newest = store.runs("room", "cell49", limit=1)[0]
        assert newest.run_id == "run29999"  # the oldest went, not the newest
        for name in ("history.sqlite3", "history.sqlite3-wal"):
            file = tmp_path / "h" / name
            if file.exists():
                assert stat.S_IMODE(file.stat().st_mode) & 0o077 == 0, name
    finally:
        store.close()
