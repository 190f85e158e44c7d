"""Two users on one MCP endpoint: a session and its approvals belong to the user who made
them (issue 18). ``identities.AdaAndBob``: the server's token is ada, BOB_TOKEN is bob."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from identities import BOB
from loop_helpers import wait_for
from mcp_helpers import answer_approval, call, text_of
from pycrdt import Map
from traitlets.config import Config

ACCEPT = {"Accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.ServerApp.identity_provider_class = "identities.AdaAndBob"
    return jp_server_config


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"external_approval_timeout": 60.0, "approval_policy": "ask"}


async def test_another_user_cannot_use_or_end_a_session(
    loop_mcp_session: Any, loop_mcp_url: str, write_notebook: Any
) -> None:
    path = write_notebook("own.ipynb", "owned_source = 1")
    minted: list[str] = []
    async with loop_mcp_session(session_ids=minted) as session:
        (session_id,) = minted
        listing = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        reading = {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tools/call",
            "params": {"name": "read_cell", "arguments": {"path": path, "cell_id": "c0"}},
        }
        as_bob = {**BOB, **ACCEPT, "mcp-session-id": session_id}
        async with httpx2.AsyncClient(headers=as_bob, timeout=30) as http:
            listed = await http.post(loop_mcp_url, json=listing)
            read = await http.post(loop_mcp_url, json=reading)
            ended = await http.delete(loop_mcp_url)
        assert (listed.status_code, read.status_code, ended.status_code) == (404, 404, 404)
        assert "owned_source" not in read.text
        still = await call(session, "read_cell", path=path, cell_id="c0")  # ada's goes on
        assert not still.is_error and "owned_source" in text_of(still)


async def answer(api: Any, board: Map, path: str, decision: str) -> dict[str, Any]:
    approval = await wait_for(lambda: board.get("approval"))
    await answer_approval(api, path, approval, decision)
    await wait_for(lambda: "approval" not in board)
    return dict(approval)


@pytest.mark.parametrize("ada_modern", [False, True], ids=["ada-session", "ada-stateless"])
async def test_an_allowance_for_the_turn_is_not_another_users(
    ada_modern: bool,
    loop_mcp_session: Any,
    write_notebook: Any,
    open_tab: Any,
    api: Any,
    jp_auth_header: Any,
) -> None:
    """Ada allows her client's runs for the turn; bob, sending the same connection key
    (her session id, or a header value she chose without a session), is asked again."""
    path = write_notebook("turn.ipynb", "print('ran', 1)")
    minted: list[str] = []
    chosen = {"mcp-session-id": "ada-chose-this"} if ada_modern else {}
    async with open_tab(path) as tab:
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        ada_headers = {**jp_auth_header, **chosen}
        async with loop_mcp_session(
            headers=ada_headers, modern=ada_modern, session_ids=minted
        ) as ada:
            first = asyncio.ensure_future(call(ada, "run_cells", path=path, cell_ids=["c0"]))
            await answer(api, board, path, "turn")
            assert not (await first).is_error
            key = "ada-chose-this" if ada_modern else minted[0]
            bob_headers = {**BOB, "mcp-session-id": key}
            async with loop_mcp_session(headers=bob_headers, modern=True, name="test-agent") as bob:
                running = asyncio.ensure_future(
                    call(bob, "run_cells", path=path, cell_ids=["c0"], wait_seconds=30)
                )
                asked = await answer(api, board, path, "deny")
                result = await running
    assert asked["cell_ids"] == ["c0"] and "bob" in asked["requested_by"]
    assert result.is_error and "denied running c0" in text_of(result)
