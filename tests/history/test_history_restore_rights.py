"""``POST history/restore`` answers with the source a run ran (and the cell's current one
in ``replaced``): it needs contents:read as well as contents:write (issue 42, D23: a user
who may write but not read got a cell's past and present source in the reply).

Two users on one server (``identities.AdaAndBob``): ada runs the cell; bob may write
notebooks but not read them. Each test runs with a plain and an ``async def`` authorizer.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from authorizers import both
from identities import BOB
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

from jupyter_loop.document import set_source

LOOP = ("api", "jupyter-loop")
PAST = "password = 'only-ada-reads-this'\n1"
NOW = "password = 'now-only-ada'\n2"


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


async def wait_for_mark(api: Any, path: str) -> None:
    """Until the server has ada's edit (the cell's stale mark says so)."""
    deadline = time.monotonic() + 20
    while True:
        marks = (await api(*LOOP, "stale", params={"path": path}))["marks"]
        if marks.get("c0") == "edited since this output":
            return
        assert time.monotonic() < deadline, marks
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("authorizer", both("BobWriteOnlyContents"))
async def test_restoring_a_run_needs_contents_read_too(
    write_notebook: Any, start_kernel: Any, run_cells: Any, api: Any, open_tab: Any
) -> None:
    path = write_notebook("drop.ipynb", PAST)
    await start_kernel(path)
    await run_cells(path, "c0")
    run = await ran_once(api, path)
    async with open_tab(path) as tab:  # ada edits the cell: a restore would propose PAST
        set_source(next(c for c in tab.notebook.ycells if c["id"] == "c0"), NOW)
        await wait_for_mark(api, path)
    for what in ("source", "outputs"):
        body = {"path": path, "cell_id": "c0", "run_id": run["run_id"], "what": what}
        try:
            reply = await api(
                *LOOP, "history", "restore", method="POST", body=body, headers=dict(BOB)
            )
        except HTTPClientError as refused:
            assert refused.code == 403, what
            said = refused.response.body.decode() if refused.response else ""
            assert "only-ada-reads-this" not in said and "now-only-ada" not in said
            assert "read on resource: contents" in said
        else:
            raise AssertionError(f"bob, who may not read, was answered: {reply}")
    with pytest.raises(HTTPClientError) as history:
        await api(*LOOP, "history", params={"path": path}, headers=dict(BOB))
    assert history.value.code == 403
    # ada, who may read and write, still restores.
    body = {"path": path, "cell_id": "c0", "run_id": run["run_id"]}
    proposal = await api(*LOOP, "history", "restore", method="POST", body=body)
    assert proposal["new_source"] == PAST
