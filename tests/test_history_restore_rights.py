"""``POST history/restore`` answers with the source a run ran (and the cell's current one
in ``replaced``): it needs contents:read as well as contents:write (issue 42, D23: a user
who may write but not read got a cell's past and present source in the reply).

Two users on one server (``identities.AdaAndBob``): ada runs the cell; bob may write
notebooks but not read them. Each test runs with a plain and an ``async def`` authorizer.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from authorizers import both
from identities import BOB
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

LOOP = ("api", "jupyter-loop")
PAST = "password = 'only-ada-reads-this'\n1"


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.ServerApp.identity_provider_class = "identities.AdaAndBob"
    return jp_server_config


async def ran_once(api: Any, path: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        params = {"path": path, "cell_id": "c0"}
        runs: list[dict[str, Any]] = (await api(*LOOP, "history", params=params))["runs"]
        if runs and runs[0]["status"] != "running":
            return runs[0]
        assert time.monotonic() < deadline, runs


@pytest.mark.parametrize("authorizer", both("BobWriteOnlyContents"))
async def test_restoring_a_run_needs_contents_read_too(
    write_notebook: Any, start_kernel: Any, run_cells: Any, api: Any
) -> None:
    path = write_notebook("drop.ipynb", PAST)
    await start_kernel(path)
    await run_cells(path, "c0")
    run = await ran_once(api, path)
    for what in ("source", "outputs"):
        body = {"path": path, "cell_id": "c0", "run_id": run["run_id"], "what": what}
        with pytest.raises(HTTPClientError) as refused:
            await api(*LOOP, "history", "restore", method="POST", body=body, headers=dict(BOB))
        assert refused.value.code == 403, what
        reply = refused.value.response.body.decode() if refused.value.response else ""
        assert "only-ada-reads-this" not in reply
        assert "read on resource: contents" in reply
    with pytest.raises(HTTPClientError) as history:
        await api(*LOOP, "history", params={"path": path}, headers=dict(BOB))
    assert history.value.code == 403
    # ada, who may read and write, still restores (the cell already holds that source).
    body = {"path": path, "cell_id": "c0", "run_id": run["run_id"]}
    with pytest.raises(HTTPClientError) as same:
        await api(*LOOP, "history", "restore", method="POST", body=body)
    assert same.value.code == 409
