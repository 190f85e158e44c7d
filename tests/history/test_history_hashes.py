"""The run history shows a hash of the source it shows, never of the source it masked
(issue 42, D22: the SHA-256 of the unmasked source beside the masked text let a guessed
secret be confirmed offline), over REST and MCP; what the server compares with the hash
of the source that ran (stale marks, restoring a source) still works."""

from __future__ import annotations

import time
from typing import Any

import pytest
from mcp_helpers import call, text_of
from tornado.httpclient import HTTPClientError

from jupyter_loop.document import source_hash
from jupyter_loop.secrets import DEFAULT_MASK

LOOP = ("api", "jupyter-loop")
CANARY = "canary-3f81c2d9e0a7b654"
SECRET_SOURCE = f"token = '{CANARY}'\nprint('hi')"
PLAIN_SOURCE = "print('plain')"


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"secrets": [CANARY]}


async def runs_of(api: Any, path: str, cell_id: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:
        params = {"path": path, "cell_id": cell_id}
        runs: list[dict[str, Any]] = (await api(*LOOP, "history", params=params))["runs"]
        if runs:
            return runs
        assert time.monotonic() < deadline


async def test_the_history_hashes_the_masked_source_it_shows(
    write_notebook: Any, start_kernel: Any, run_cells: Any, api: Any, loop_mcp_session: Any
) -> None:
    path = write_notebook("hashes.ipynb", SECRET_SOURCE, PLAIN_SOURCE)
    await start_kernel(path)
    await run_cells(path, "c0", "c1")
    (masked,) = await runs_of(api, path, "c0")
    (plain,) = await runs_of(api, path, "c1")

    assert masked["source"] == f"token = '{DEFAULT_MASK}'\nprint('hi')"
    assert masked["source_hash"] == source_hash(masked["source"])  # what is shown
    guesses = [SECRET_SOURCE, SECRET_SOURCE.replace(CANARY, "canary-0000000000000000")]
    assert source_hash(guesses[0]) != masked["source_hash"]  # no guess can be confirmed
    assert all(source_hash(guess) != masked["source_hash"] for guess in guesses)
    # A source without a secret is shown whole: its hash is the hash of the cell's source.
    assert plain["source_hash"] == source_hash(PLAIN_SOURCE)

    async with loop_mcp_session() as session:
        told = text_of(await call(session, "cell_history", path=path, cell_id="c0"))
    assert f"source {source_hash(masked['source'])[:12]}:" in told
    assert source_hash(SECRET_SOURCE)[:12] not in told and CANARY not in told

    # What the server compares with the source that ran still works: the masked source is
    # not restored (it would write the mask into the cell), and no output is stale.
    body = {"path": path, "cell_id": "c0", "run_id": masked["run_id"]}
    with pytest.raises(HTTPClientError) as refused:
        await api(*LOOP, "history", "restore", method="POST", body=body)
    assert refused.value.code == 409
    assert (await api(*LOOP, "stale", params={"path": path}))["marks"] == {}
