"""The REST edge under real use: odd paths, malformed bodies, Jupyter's own authorization."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_helpers import AGENT, Agent, openai_config
from authorizers import both
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError

from jupyter_loop.testing import call_tools, say

RUNS = ("api", "jupyter-loop", "runs")


@pytest.fixture
def loop_config(loop_model_server):
    return openai_config(loop_model_server)


async def status_of(api: Any, *parts: str, **kwargs: Any) -> tuple[int, Any]:
    try:
        return 200, await api(*parts, **kwargs)
    except HTTPClientError as e:
        body = e.response.body if e.response is not None else b""
        try:
            return e.code, json.loads(body or b"null")
        except ValueError:
            return e.code, body


# -- one notebook, one room ----------------------------------------------------------


@pytest.mark.parametrize(
    "alias", ["./nb.ipynb", "nb.ipynb/", "sub/../nb.ipynb", "sub//../nb.ipynb"]
)
async def test_spellings_of_a_path_are_one_notebook(notebook_in_tab, run_cells, api, alias):
    async with notebook_in_tab("nb.ipynb", "print('via alias')") as (path, tab):
        ticket = await run_cells(alias, "c0")
        assert ticket["path"] == "nb.ipynb"
        await wait_for(lambda: tab.cell("c0").get("execution_count"))
        assert tab.text("c0") == "via alias\n"
    one = await api(*AGENT, "conversation", params={"path": path})
    other = await api(*AGENT, "conversation", params={"path": alias})
    assert one["file_id"] == other["file_id"]


@pytest.mark.parametrize("path", ["../nb.ipynb", "/nb.ipynb", ".", "sub/../../nb.ipynb"])
async def test_paths_outside_the_root_are_refused(write_notebook, run_cells, path):
    write_notebook("nb.ipynb", "1")
    with pytest.raises(HTTPClientError) as refused:
        await run_cells(path, "c0")
    assert refused.value.code == 400


# -- bad input is a 400 --------------------------------------------------------------

POSTS = [
    RUNS,
    ("api", "jupyter-loop", "input"),
    (*AGENT, "turns"),
    (*AGENT, "turns", "t1", "stop"),
    (*AGENT, "approvals", "a1"),
    (*AGENT, "proposals", "p1", "accept"),
    (*AGENT, "proposals", "p1", "reject"),
]

MALFORMED = [
    "[" * 100_000 + "]" * 100_000,
    '{"path": ' + "[" * 50_000 + "]" * 50_000 + "}",
    '{"path": "\\ud800", "cell_ids": ["c0"], "message": "hi", "decision": "allow",'
    ' "cell_id": "c0", "request_id": "r", "value": "v"}',
    '{"path": "nb\\ud800.ipynb", "cell_ids": ["c0"], "message": "hi", "decision": "allow",'
    ' "cell_id": "c0", "request_id": "r", "value": "v"}',
    '{"path": "nb.ipynb", "cell_ids": ["c\\udfff"], "message": "\\ud800", "decision": "allow",'
    ' "cell_id": "c0", "request_id": "r", "value": "\\ud800"}',
    '{"path": "nb\\u0000.ipynb", "cell_ids": ["c0"], "message": "hi", "cell_id": "c0",'
    ' "request_id": "r", "value": "v"}',
    '{"path": "' + "x" * 5_000 + '.ipynb", "cell_ids": ["c0"], "message": "hi", "cell_id": "c0",'
    ' "request_id": "r", "value": "v"}',
    '{"path": "nb.ipynb", "cell_ids": ["c0"], "kernel_id": 5, "message": 5, "cell_id": 7}',
    b"\xff\xfe{}",
    "1e400",
    '{"path": 1e400}',
    "null",
]


async def test_malformed_bodies_are_4xx_with_a_message(write_notebook, api):
    write_notebook("nb.ipynb", "1")
    failures = []
    for route in POSTS:
        for body in MALFORMED:
            status, reply = await status_of(api, *route, method="POST", body=body)
            ok = 400 <= status < 500 and isinstance(reply, dict) and reply.get("message")
            if not ok:
                failures.append((route[-1], str(body)[:40], status, reply))
    assert failures == []


# -- authorization as Jupyter's own --------------------------------------------------


@pytest.mark.parametrize("authorizer", [*both("NoContents"), *both("ReadOnlyContents")])
async def test_running_cells_needs_write_on_contents(
    write_notebook, start_kernel, run_cells, api, read_notebook
):
    path = write_notebook("nb.ipynb", "print('must not run')")
    await start_kernel(path)
    with pytest.raises(HTTPClientError) as refused:
        await run_cells(path, "c0")
    assert refused.value.code == 403
    assert (await api(*RUNS, params={"path": path}))["cells"] == []
    cell = read_notebook(path).cells[0]
    assert (cell.outputs, cell.execution_count) == ([], None)


@pytest.mark.parametrize("authorizer", both("NoContents"))
async def test_the_agent_needs_read_on_contents(write_notebook, api, loop_model_server):
    path = write_notebook("nb.ipynb", "SECRET_SOURCE = 1")
    loop_model_server.script(say("hello"))
    for route, kwargs in [
        ((*AGENT, "turns"), {"method": "POST", "body": {"path": path, "message": "hi"}}),
        ((*AGENT, "conversation"), {"params": {"path": path}}),
        ((*AGENT, "journal"), {"params": {"path": path}}),
        ((*AGENT, "conversations"), {"method": "POST", "body": {"path": path}}),
    ]:
        status, _ = await status_of(api, *route, **kwargs)
        assert status == 403, route
    assert loop_model_server.requests == []


@pytest.mark.parametrize("authorizer", both("ReadOnlyContents"))
async def test_a_turn_runs_no_cells_for_a_reader(
    write_notebook, start_kernel, api, loop_model_server
):
    path = write_notebook("nb.ipynb", "print('must not run')")
    await start_kernel(path)
    loop_model_server.script(call_tools(("run_cells", {"cell_ids": ["c0"]})), say("done"))
    body = {"path": path, "message": "run it", "approval": "ask"}
    await api(*AGENT, "turns", method="POST", body=body)
    conversation = await Agent(api).ended(path)  # no approval was asked: nobody answers one
    assert conversation["turn"]["state"] == "done"
    second = loop_model_server.bodies("/v1/chat/completions")[1]
    (answer,) = [m for m in second["messages"] if m["role"] == "tool"]  # the call's result
    assert "may not run cells" in answer["content"]
    assert (await api(*RUNS, params={"path": path}))["cells"] == []
