"""Scoped tokens for outside agents (issue 21, part 6): made, listed and revoked through the
REST API and ``jupyter loop token``; the MCP endpoint, driven by the SDK's own client, takes
them with at most their scope and their maker's rights; nothing else takes them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import httpx2
import pytest
from authorizers import both
from mcp_helpers import TOKENS, bearer, call, make, text_of
from tornado.httpclient import HTTPClientError


async def test_each_scope_gives_at_most_its_rights(
    loop_mcp_session: Any, write_notebook: Any, api: Any
) -> None:
    path = write_notebook("scoped.ipynb", "print('hi')")
    reader = (await make(api, "read"))["token"]
    proposer = (await make(api, "propose"))["token"]
    async with loop_mcp_session(headers=bearer(reader)) as session:
        read = await call(session, "read_cell", path=path, cell_id="c0")
        proposed = await call(session, "propose_delete", path=path, cell_id="c0", summary="x")
    assert not read.is_error and "print('hi')" in text_of(read)
    assert proposed.is_error and "scope is read: it cannot propose" in text_of(proposed)
    async with loop_mcp_session(headers=bearer(proposer)) as session:
        proposed = await call(session, "propose_delete", path=path, cell_id="c0", summary="x")
        ran = await call(session, "run_cells", path=path, cell_ids=["c0"], wait_seconds=1)
        stopped = await call(session, "interrupt", path=path)
    assert not proposed.is_error, text_of(proposed)
    assert ran.is_error and "scope is propose: it cannot run cells" in text_of(ran)
    assert stopped.is_error and "scope is propose: it cannot interrupt" in text_of(stopped)
    journal = await api("api", "jupyter-loop", "agent", "journal", params={"path": path})
    assert {e["by"] for e in journal["entries"] if e["action"] == "external_call"} == {
        f'an MCP client of {e}, calling itself "test-agent"' for e in {_login()}
    }


async def test_a_notebook_token_touches_that_notebook_only(
    loop_mcp_session: Any, write_notebook: Any, api: Any
) -> None:
    mine = write_notebook("work/mine.ipynb", "1")
    other = write_notebook("work/other.ipynb", "2")
    token = (await make(api, "read", notebook="/work//mine.ipynb"))["token"]
    async with loop_mcp_session(headers=bearer(token)) as session:
        allowed = await call(session, "read_cell", path=mine, cell_id="c0")
        refused = await call(session, "read_cell", path=other, cell_id="c0")
        listed = await call(session, "list_notebooks")
    assert not allowed.is_error
    assert refused.is_error and "for the notebook work/mine.ipynb only" in text_of(refused)
    assert listed.is_error and "other.ipynb" not in text_of(listed)


async def test_expired_revoked_and_made_up_tokens_get_401_and_no_other_api_takes_one(
    loop_mcp_url: str, api: Any, jp_fetch: Any
) -> None:
    kept = await make(api, "run")
    short = await make(api, "read", expires_in=1)
    revoked = await make(api, "read")
    await api(*TOKENS, revoked["id"], method="DELETE")
    await asyncio.sleep(1.2)
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    made_up = "jlt_" + kept["id"] + "_not-the-secret"
    async with httpx2.AsyncClient() as http:
        for token in (short["token"], revoked["token"], made_up):
            answer = await http.post(
                loop_mcp_url, json=listing, headers={**accept, **bearer(token)}
            )
            assert answer.status_code == 401, token
            assert "unknown, revoked or expired" in answer.json()["error"]["message"]
        contents = loop_mcp_url.replace("jupyter-loop/mcp", "contents")
        answer = await http.get(contents, headers=bearer(kept["token"]))
        assert answer.status_code == 403  # Jupyter's own API does not know it
    listed = await api(*TOKENS)
    assert [t["id"] for t in listed["tokens"]] == [kept["id"], short["id"]]
    assert all("token" not in t and "digest" not in t for t in listed["tokens"])


@pytest.mark.parametrize("authorizer", both("ReadOnly"))
async def test_a_token_is_never_more_than_its_maker(
    loop_mcp_session: Any, write_notebook: Any, api: Any
) -> None:
    path = write_notebook("ro.ipynb", "1")
    with pytest.raises(HTTPClientError) as refused:
        await make(api, "propose")
    assert refused.value.code == 403
    assert "contents:write" in json.loads(refused.value.response.body)["message"]
    token = (await make(api, "read"))["token"]
    async with loop_mcp_session(headers=bearer(token)) as session:
        assert not (await call(session, "read_cell", path=path, cell_id="c0")).is_error


async def test_the_terminal_client_makes_lists_and_revokes_tokens(
    http_server_client: Any, jp_http_port: int, jp_base_url: str, jp_serverapp: Any
) -> None:
    token = jp_serverapp.identity_provider.token
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}"

    def loop(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "jupyter_loop.cli", "--url", url, "--token", token, *args],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    printed = await asyncio.to_thread(
        loop, "token", "create", "--scope", "propose", "--expires", "8h"
    )
    secret = printed.splitlines()[-1]
    assert secret.startswith("jlt_") and "propose, any notebook, expires" in printed
    token_id = secret.split("_")[1]
    assert token_id in await asyncio.to_thread(loop, "token", "list")
    assert f"Revoked token {token_id}" in await asyncio.to_thread(loop, "token", "revoke", token_id)
    assert "No tokens." in await asyncio.to_thread(loop, "token", "list")


def _login() -> str:
    from jupyter_loop.access.identity import server_login_name

    return server_login_name()
