"""What a tab's History view and stale marks ask the server (history/handlers.py):
the stale marks of a notebook over REST, where a run's outputs can be seen, and the source
of a run restored as a proposal."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from authorizers import both
from loop_helpers import wait_for
from pycrdt import Map
from tornado.httpclient import HTTPClientError

from jupyter_loop.document import set_source
from jupyter_loop.execution.board import KERNEL_LIFE
from jupyter_loop.testing.yjs import read_with_yjs

LOOP = ("api", "jupyter-loop")
CANARY = "canary-5b1e9f03c7a2d864"


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"secrets": [CANARY], "output_budget_bytes": 4 * 1024}


async def marks_until(api: Any, path: str, wanted: dict[str, str]) -> dict[str, str]:
    """The notebook's stale marks once they are ``wanted`` (a tab's edit reaches the
    server on its own time)."""
    deadline = time.monotonic() + 20
    while True:
        marks: dict[str, str] = (await api(*LOOP, "stale", params={"path": path}))["marks"]
        if marks == wanted:
            return marks
        assert time.monotonic() < deadline, marks
        await asyncio.sleep(0.2)


async def run_edited(tab: Any, api: Any, run_cells: Any, path: str, source: str, nth: int) -> Any:
    """Give c0 a new ``source`` from the tab, wait until the server has it (its stale
    mark: a tab's edit reaches it on its own time), run it and wait for the cell's
    ``nth`` run; returns the runs, newest first."""
    set_source(next(c for c in tab.notebook.ycells if c["id"] == "c0"), source)
    await marks_until(api, path, {"c0": "edited since this output"})
    await run_cells(path, "c0")
    return await ran(api, path, "c0", nth)


async def ran(api: Any, path: str, cell_id: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:
        params = {"path": path, "cell_id": cell_id}
        runs: list[dict[str, Any]] = (await api(*LOOP, "history", params=params))["runs"]
        if len(runs) >= count:
            return runs
        assert time.monotonic() < deadline, runs
        await asyncio.sleep(0.2)


async def test_stale_marks_follow_an_edit_and_a_kernel_restart(
    write_notebook: Any, start_kernel: Any, run_cells: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("stale.ipynb", "print('one')", "print('two')")
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: tab.cell("c1").get("execution_count"))
        await ran(api, path, "c1", 1)
        assert await marks_until(api, path, {}) == {}
        set_source(next(c for c in tab.notebook.ycells if c["id"] == "c0"), "print('1')")
        await marks_until(api, path, {"c0": "edited since this output"})
        await api("api", "kernels", kernel_id, "restart", method="POST", body="")
        await marks_until(
            api,
            path,
            {"c0": "edited since this output", "c1": "kernel restarted since this output"},
        )


async def test_tabs_are_told_of_a_restart_and_then_the_marks_have_changed(
    write_notebook: Any, start_kernel: Any, run_cells: Any, open_tab: Any, api: Any
) -> None:
    """A tab asks for the marks when its kernel's status changes, but its kernel
    connection may hear nothing of a restart made over REST (seen in the browser: one of
    two tabs, in 2 of 6 runs). The server tells the notebook's tabs through the shared
    document, and by then the marks it answers with have changed."""
    path = write_notebook("restarted.ipynb", "print('one')")
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count"))
        await ran(api, path, "c0", 1)
        assert await marks_until(api, path, {}) == {}
        life = tab.notebook.ydoc.get(KERNEL_LIFE, type=Map)
        before = dict(life)
        await api("api", "kernels", kernel_id, "restart", method="POST", body="")
        await wait_for(lambda: dict(life) != before)
        told = await api(*LOOP, "stale", params={"path": path})
        assert told["marks"] == {"c0": "kernel restarted since this output"}


async def test_history_says_where_a_runs_outputs_are(
    write_notebook: Any,
    start_kernel: Any,
    run_cells: Any,
    open_tab: Any,
    api: Any,
    jp_fetch: Any,
) -> None:
    path = write_notebook("where.ipynb", "print('a')")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await ran(api, path, "c0", 1)
        set_source(next(c for c in tab.notebook.ycells if c["id"] == "c0"), "print('b')")
        await wait_for(lambda: tab.text("c0") == "a\n")
        await marks_until(api, path, {"c0": "edited since this output"})  # the server has it
        await run_cells(path, "c0")
        runs = await ran(api, path, "c0", 2)
        newest, older = runs
        assert newest["source"] == "print('b')" and older["source"] == "print('a')"
        # The cell shows the newest run's outputs; the store keeps each run's, cut or not.
        assert newest["outputs_shown"] is True and older["outputs_shown"] is False
        assert newest["outputs_url"] and older["outputs_url"]
        response = await jp_fetch(*older["outputs_url"].split("/"))
        assert response.body.decode() == "a\n"
        as_notebook = {"format": "nbformat"}  # what the History view renders
        response = await jp_fetch(*older["outputs_url"].split("/"), params=as_notebook)
        assert json.loads(response.body) == {
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "a\n"}]
        }
        whole = (await api(*LOOP, "history", params={"path": path}))["runs"]
        assert [run["outputs_shown"] for run in whole] == [None, None]  # not compared

        # A run cut to the notebook's budget is kept whole in the store, as are the
        # cell's two runs before it.
        long = "for i in range(2000):\n    print('line', i)"
        cut, *_ = await run_edited(tab, api, run_cells, path, long, 3)
        assert cut["outputs_shown"] is True and cut["outputs_url"]
        response = await jp_fetch(*cut["outputs_url"].split("/"))
        assert "line 1999" in response.body.decode() and "line 0\n" in response.body.decode()
        with pytest.raises(HTTPClientError) as too_large:  # the view shows it as text
            await jp_fetch(*cut["outputs_url"].split("/"), params=as_notebook)
        assert too_large.value.code == 409
        await run_cells(path, "c0")
        recut, earlier, *_ = await ran(api, path, "c0", 4)
        assert recut["outputs_url"] and earlier["outputs_url"]  # a cell's last 3 runs
        response = await jp_fetch(*earlier["outputs_url"].split("/"))
        assert "line 1999" in response.body.decode()
        assert [run["outputs_url"] is not None for run in await ran(api, path, "c0", 4)] == [
            True,
            True,
            True,
            False,  # the fourth run back: beyond full_output_runs_per_cell
        ]


async def test_restoring_a_runs_source_is_a_proposal_that_can_be_accepted(
    write_notebook: Any, start_kernel: Any, run_cells: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("restore.ipynb", "x = 1\nx")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        (run,) = await ran(api, path, "c0", 1)
        ycell = next(c for c in tab.notebook.ycells if c["id"] == "c0")
        set_source(ycell, "x = 2\nx")
        await marks_until(api, path, {"c0": "edited since this output"})
        body = {"path": path, "cell_id": "c0", "run_id": run["run_id"]}
        proposal = await api(*LOOP, "history", "restore", method="POST", body=body)
        assert proposal["kind"] == "modify" and proposal["new_source"] == "x = 1\nx"
        board = tab.notebook.ydoc.get("jupyter_loop:proposals", type=Map)
        await wait_for(lambda: proposal["id"] in board)
        assert str(ycell["source"]) == "x = 2\nx"  # a proposal: nothing changed yet
        await api(
            *LOOP, "agent", "proposals", proposal["id"], "accept",
            method="POST", body={"path": path},
        )  # fmt: skip
        await wait_for(lambda: str(ycell["source"]) == "x = 1\nx")
        with pytest.raises(HTTPClientError) as same:
            await api(*LOOP, "history", "restore", method="POST", body=body)
        assert same.value.code == 409


async def test_restoring_a_runs_outputs_is_a_proposal_that_puts_them_back(
    write_notebook: Any, start_kernel: Any, run_cells: Any, open_tab: Any, api: Any
) -> None:
    """The History view's "Restore these outputs": the outputs an earlier run ended with
    (kept by the server although nothing was cut) come back into the cell once accepted,
    as a tab reads them with Yjs; the source stays as it is."""
    path = write_notebook("outputs.ipynb", "print('first')\n'shown'")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        (first,) = await ran(api, path, "c0", 1)
        await run_edited(tab, api, run_cells, path, "print('second')", 2)
        await wait_for(lambda: tab.text("c0") == "second\n")

        body = {"path": path, "cell_id": "c0", "run_id": first["run_id"], "what": "outputs"}
        proposal = await api(*LOOP, "history", "restore", method="POST", body=body)
        assert proposal["kind"] == "outputs"
        source_too = {**body, "what": "source"}
        both_kinds = await api(*LOOP, "history", "restore", method="POST", body=source_too)
        assert both_kinds["replaced"] == []  # a source proposal does not replace outputs
        board = tab.notebook.ydoc.get("jupyter_loop:proposals", type=Map)
        await wait_for(lambda: proposal["id"] in board)
        assert tab.text("c0") == "second\n"  # a proposal: nothing changed yet
        await api(
            *LOOP, "agent", "proposals", proposal["id"], "accept",
            method="POST", body={"path": path},
        )  # fmt: skip
        await wait_for(lambda: tab.text("c0") == "first\n")
        (view,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        (cell,) = view.cells
        assert [o["output_type"] for o in cell["outputs"]] == ["stream", "execute_result"]
        assert cell["outputs"][0]["text"] == "first\n"
        assert cell["outputs"][1]["data"]["text/plain"] == "'shown'"
        assert cell["source"] == "print('second')"

        # Undone on the server (not Ctrl-Z: see ``proposals.undo_outputs``).
        undo = (*LOOP, "agent", "proposals", proposal["id"], "undo")
        await api(*undo, method="POST", body={"path": path})
        await wait_for(lambda: tab.text("c0") == "second\n")
        assert [o["output_type"] for o in tab.cell("c0")["outputs"]] == ["stream"]
        assert board[proposal["id"]]["status"] == "undone"
        with pytest.raises(HTTPClientError) as again:
            await api(*undo, method="POST", body={"path": path})
        assert again.value.code == 409


async def test_outputs_the_notebook_cut_come_back_cut_as_the_cell_held_them(
    write_notebook: Any, start_kernel: Any, run_cells: Any, open_tab: Any, api: Any
) -> None:
    """A run cut to the notebook's output budget is restored as its cell held it: the
    head, a marker linking to the run's full output, the tail (it was refused, 409)."""
    path = write_notebook("long.ipynb", "for i in range(30000):\n    print('line', i)")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        (long_run,) = await ran(api, path, "c0", 1)
        await wait_for(lambda: tab.text("c0").endswith("line 29999\n"))
        held = [dict(output) for output in tab.cell("c0")["outputs"]]
        assert [o["output_type"] for o in held] == ["stream", "display_data", "stream"]
        await run_edited(tab, api, run_cells, path, "print('short')", 2)
        await wait_for(lambda: tab.text("c0") == "short\n")

        body = {"path": path, "cell_id": "c0", "run_id": long_run["run_id"], "what": "outputs"}
        proposal = await api(*LOOP, "history", "restore", method="POST", body=body)
        await api(
            *LOOP, "agent", "proposals", proposal["id"], "accept",
            method="POST", body={"path": path},
        )  # fmt: skip
        await wait_for(lambda: tab.text("c0").endswith("line 29999\n"))
        (view,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        head, marker, tail = view.cells[0]["outputs"]
        assert head == {**held[0], "text": str(held[0]["text"])}  # the same first lines
        link = marker["metadata"]["jupyter_loop"]["full_output"]
        assert link == held[1]["metadata"]["jupyter_loop"]["full_output"]  # the same run's
        assert link.endswith(long_run["outputs_url"])
        assert tail["text"].endswith("line 29999\n")
        assert marker["metadata"]["jupyter_loop"]["omitted"]["lines"] > 1000
        kept = len(json.dumps(view.cells[0]["outputs"]).encode())
        assert kept < len("".join(f"line {i}\n" for i in range(30000)))
    with pytest.raises(HTTPClientError) as unknown:
        await api(*LOOP, "history", "restore", method="POST", body={**body, "what": "both"})
    assert unknown.value.code == 400


async def test_a_masked_source_is_not_restored_and_bad_requests_are_4xx(
    write_notebook: Any, start_kernel: Any, run_cells: Any, api: Any
) -> None:
    path = write_notebook("secret.ipynb", f"token = '{CANARY}'")
    await start_kernel(path)
    await run_cells(path, "c0")
    (run,) = await ran(api, path, "c0", 1)
    for body, status in (
        ({"path": path, "cell_id": "c0", "run_id": run["run_id"]}, 409),
        ({"path": path, "cell_id": "c0", "run_id": "nope"}, 404),
        ({"path": path, "cell_id": "c0"}, 400),
    ):
        with pytest.raises(HTTPClientError) as refused:
            await api(*LOOP, "history", "restore", method="POST", body=body)
        assert refused.value.code == status, body
    with pytest.raises(HTTPClientError) as missing:
        await api(*LOOP, "stale", params={})
    assert missing.value.code == 400


@pytest.mark.parametrize("authorizer", both("NoContents"))
async def test_stale_marks_need_contents_read(write_notebook: Any, api: Any) -> None:
    write_notebook("nb.ipynb", "1")
    with pytest.raises(HTTPClientError) as refused:
        await api(*LOOP, "stale", params={"path": "nb.ipynb"})
    assert refused.value.code == 403


@pytest.mark.parametrize("authorizer", both("ReadOnlyContents"))
async def test_restoring_needs_contents_write(write_notebook: Any, api: Any) -> None:
    write_notebook("nb.ipynb", "1")
    for what in ("source", "outputs"):
        body = {"path": "nb.ipynb", "cell_id": "c0", "run_id": "r", "what": what}
        with pytest.raises(HTTPClientError) as refused:
            await api(*LOOP, "history", "restore", method="POST", body=body)
        assert refused.value.code == 403
    with pytest.raises(HTTPClientError) as undo:
        await api(
            *LOOP, "agent", "proposals", "p1", "undo", method="POST", body={"path": "nb.ipynb"}
        )
    assert undo.value.code == 403
    assert (await api(*LOOP, "stale", params={"path": "nb.ipynb"}))["marks"] == {}
