"""Server-side execution end to end: real server, real kernel, real Y clients."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError

LOOP = ("print('line', 1)\nprint('line', 2)", "1 + 1")


def counting(count: int, pause: float) -> str:
    """A cell printing 0 .. count-1, one line every ``pause`` seconds."""
    body = f"    print(i, flush=True)\n    time.sleep({pause})"
    return f"import time\nfor i in range({count}):\n{body}"


def counted(count: int) -> str:
    """What :func:`counting` prints."""
    return "".join(f"{i}\n" for i in range(count))


def finished(read_notebook: Any, path: str, index: int = 0) -> Any:
    def check() -> Any:
        notebook = read_notebook(path)
        cell = notebook.cells[index] if notebook else None
        return cell if cell and cell.get("execution_count") else None

    return check


async def test_run_with_no_tab_open_ends_on_disk(
    write_notebook, read_notebook, start_kernel, run_cells
):
    path = write_notebook("alone.ipynb", *LOOP)
    await start_kernel(path)
    ticket = await run_cells(path, "c0", "c1")
    assert [cell["state"] for cell in ticket["cells"]] == ["queued", "queued"]
    cell = await wait_for(finished(read_notebook, path, 1))
    first = (await wait_for(lambda: read_notebook(path))).cells[0]
    assert first.outputs == [
        {"output_type": "stream", "name": "stdout", "text": "line 1\nline 2\n"}
    ]
    assert first.execution_count == 1
    assert cell.outputs[0]["data"]["text/plain"] == "2"
    assert cell.execution_count == 2


async def test_two_tabs_see_the_same_live_outputs(
    write_notebook, start_kernel, run_cells, open_tab
):
    path = write_notebook(
        "shared.ipynb",
        counting(3, 0.3),
    )
    await start_kernel(path)
    async with open_tab(path) as first, open_tab(path) as second:
        await wait_for(lambda: first.notebook.cell_number and second.notebook.cell_number)
        await run_cells(path, "c0")
        await wait_for(lambda: first.text("c0") == "0\n")
        assert first.cell("c0")["execution_state"] == "running"
        await wait_for(lambda: second.text("c0").startswith("0\n"))
        assert second.marker("c0")["state"] == "running"
        await wait_for(lambda: first.cell("c0").get("execution_count") == 1)
        await wait_for(lambda: second.cell("c0").get("execution_count") == 1)
        for tab in (first, second):
            assert tab.text("c0") == "0\n1\n2\n"
            assert tab.cell("c0")["execution_state"] == "idle"
            assert tab.marker("c0")["status"] == "ok"


async def test_streams_coalesce_and_carriage_returns_overwrite(
    write_notebook, read_notebook, start_kernel, run_cells
):
    source = (
        "import sys, time\n"
        "for i in range(5):\n"
        "    print(f'\\rprogress {i * 25}%', end='', flush=True)\n"
        "    time.sleep(0.05)\n"
        "print()\n"
        "print('out', flush=True)\n"
        "print('err', file=sys.stderr, flush=True)\n"
        "print('more out', flush=True)\n"
        "print('ünï 😀', flush=True)"
    )
    path = write_notebook("streams.ipynb", source)
    await start_kernel(path)
    await run_cells(path, "c0")
    cell = await wait_for(finished(read_notebook, path))
    assert [(o["name"], o["text"]) for o in cell.outputs] == [
        ("stdout", "progress 100%\nout\n"),
        ("stderr", "err\n"),
        ("stdout", "more out\nünï 😀\n"),
    ]


async def test_an_error_stops_the_rest_of_a_run_all(notebook_in_tab, read_notebook, run_cells):
    async with notebook_in_tab("errors.ipynb", "x = 1", "1 / 0", "print('never')") as (path, tab):
        await run_cells(path, "c0", "c1", "c2")
        await wait_for(lambda: (tab.marker("c2") or {}).get("status") == "aborted")
        await wait_for(lambda: (tab.marker("c1") or {}).get("status") == "error")
        error = tab.cell("c1")["outputs"][0]
        assert (error["output_type"], error["ename"]) == ("error", "ZeroDivisionError")
        assert tab.cell("c2")["outputs"] == []
        assert tab.cell("c2").get("execution_count") is None
        assert [tab.cell(c)["execution_state"] for c in ("c0", "c1", "c2")] == ["idle"] * 3


async def test_kernel_death_is_reported_on_the_cell(
    write_notebook, read_notebook, start_kernel, run_cells, kernel_back
):
    path = write_notebook(
        "death.ipynb", "import os, time\nprint('bye', flush=True)\ntime.sleep(0.5)\nos._exit(1)"
    )
    kernel_id = await start_kernel(path)
    await run_cells(path, "c0")

    def reported() -> Any:
        notebook = read_notebook(path)
        if notebook is None:
            return None
        cell = notebook.cells[0]
        text = "".join(o.get("text", "") for o in cell.outputs)
        return "kernel died" in text and cell

    cell = await wait_for(reported, timeout=40)
    assert cell.outputs[0]["text"] == "bye\n"
    await kernel_back(kernel_id)


async def test_empty_cell_is_cleared_without_running(
    write_notebook, read_notebook, start_kernel, run_cells
):
    path = write_notebook("empty.ipynb", "   ")
    await start_kernel(path)
    ticket = await run_cells(path, "c0")
    assert ticket["cells"][0]["state"] == "done"


@pytest.mark.parametrize("rtc_cleanup_delay", [0.5])
async def test_run_outlives_the_room_cleanup_delay(
    write_notebook, read_notebook, start_kernel, run_cells, open_tab, jp_serverapp
):
    path = write_notebook("long.ipynb", counting(8, 0.25))
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.text("c0").startswith("0\n"))
    # The only tab closed; the room must stay alive (pinned) and saved until the run ends.
    cell = await wait_for(finished(read_notebook, path), timeout=30)
    assert cell.outputs[0]["text"] == counted(8)
    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
        assert tab.text("c0") == counted(8)
        assert tab.cell("c0")["execution_count"] == 1


async def test_runs_survive_rename_of_the_notebook(
    write_notebook, read_notebook, start_kernel, run_cells, api
):
    path = write_notebook("before.ipynb", "import time\ntime.sleep(1)\nprint('after rename')")
    await start_kernel(path)
    await run_cells(path, "c0")
    await api("api", "contents", path, method="PATCH", body={"path": "after.ipynb"})
    cell = await wait_for(finished(read_notebook, "after.ipynb"), timeout=30)
    assert cell.outputs[0]["text"] == "after rename\n"


# -- bad requests ------------------------------------------------------------------------


async def error_of(call: Any) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as raised:
        await call
    response = raised.value.response
    assert response is not None
    return raised.value.code, json.loads(response.body)["message"]


async def test_unknown_notebook_is_404(run_cells):
    code, message = await error_of(run_cells("missing.ipynb", "c0"))
    assert code == 404 and "missing.ipynb" in message


async def test_unknown_cell_is_404_and_changes_nothing(
    write_notebook, read_notebook, start_kernel, run_cells, jp_root_dir
):
    path = write_notebook("cells.ipynb", "1", "2")
    await start_kernel(path)
    before = (jp_root_dir / path).read_text()
    code, message = await error_of(run_cells(path, "c0", "nope"))
    assert code == 404 and "nope" in message
    assert (jp_root_dir / path).read_text() == before


async def test_cell_from_another_notebook_is_404(
    write_notebook, start_kernel, run_cells, jp_root_dir
):
    path = write_notebook("one.ipynb", "1")
    other = jp_root_dir / "two.ipynb"
    other.write_text((jp_root_dir / path).read_text().replace('"c0"', '"other"'))
    await start_kernel(path)
    code, _ = await error_of(run_cells(path, "other"))
    assert code == 404


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "JSON object"),
        (json.dumps({"path": "x.ipynb"}), "cell_ids"),
        (json.dumps({"path": "x.ipynb", "cell_ids": [1]}), "cell_ids"),
        (json.dumps({"cell_ids": ["c0"]}), "path"),
        (json.dumps({"path": "x.ipynb", "cell_ids": ["a", "a"]}), "same cell"),
    ],
)
async def test_malformed_requests_are_400(jp_fetch, body, fragment):
    code, message = await error_of(
        jp_fetch("api", "jupyter-loop", "runs", method="POST", body=body)
    )
    assert code == 400 and fragment in message


@pytest.mark.parametrize("path", ["../outside.ipynb", "/etc/passwd", "a/../../b.ipynb"])
async def test_paths_outside_the_root_are_rejected(run_cells, path):
    code, _ = await error_of(run_cells(path, "c0"))
    assert code == 400


async def test_markdown_cells_are_not_run(jp_root_dir, run_cells, start_kernel):
    from loop_helpers import notebook_json

    (jp_root_dir / "md.ipynb").write_text(notebook_json("# title", cell_type="markdown"))
    await start_kernel("md.ipynb")
    code, message = await error_of(run_cells("md.ipynb", "c0"))
    assert code == 400 and "not a code cell" in message


async def test_notebook_without_kernel_is_409(write_notebook, run_cells):
    path = write_notebook("nokernel.ipynb", "1")
    code, message = await error_of(run_cells(path, "c0"))
    assert code == 409 and "no running kernel" in message


async def test_unknown_kernel_is_404(write_notebook, run_cells):
    path = write_notebook("k.ipynb", "1")
    code, _ = await error_of(run_cells(path, "c0", kernel_id="not-a-kernel"))
    assert code == 404


async def test_requests_without_a_token_are_refused(jp_fetch):
    with pytest.raises(HTTPClientError) as raised:
        await jp_fetch(
            "api", "jupyter-loop", "runs", method="POST", body="{}", headers={"Authorization": ""}
        )
    assert raised.value.code in (401, 403)


async def test_run_and_wait_reports_each_outcome(write_notebook, start_kernel, jp_serverapp):
    from jupyter_loop.execution.payloads import RunRequest

    path = write_notebook("wait.ipynb", "x = 1", "", "1 / 0", "print('never')")
    await start_kernel(path)
    service = jp_serverapp.web_app.settings["jupyter_loop_execution"]
    outcomes = await service.run_and_wait(
        RunRequest(path=path, cell_ids=("c0", "c1", "c2", "c3")), "agent"
    )
    assert {cell: outcome.status for cell, outcome in outcomes.items()} == {
        "c0": "ok",
        "c1": "ok",
        "c2": "error",
        "c3": "aborted",
    }
    assert outcomes["c0"].execution_count == 1


async def test_a_notebook_deleted_mid_run_still_gets_its_outputs_live(
    write_notebook, start_kernel, run_cells, open_tab, api, caplog
):
    path = write_notebook("doomed.ipynb", counting(12, 0.25))
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.text("c0").startswith("0\n"))
        await api("api", "contents", path, method="DELETE")
        # The saves that follow fail; the run goes on and ends normally in the document.
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1, timeout=30)
        assert tab.text("c0") == counted(12)
    # A failed save is a warning: no write or run of jupyter-loop failed.
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not [message for message in errors if "jupyter-loop" in message], errors
