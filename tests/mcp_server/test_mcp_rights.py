"""Each MCP tool needs the rights its REST counterpart needs (the server's authorizer decides).

Every test runs with a plain and an ``async def`` authorizer (``authorizers.both``): Jupyter
awaits either, and so must every check here.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from authorizers import both
from mcp_helpers import call, text_of


@pytest.fixture
def authorizer() -> str:
    return "authorizers.ReadOnly"


@pytest.mark.parametrize("authorizer", both("ReadOnly"))
async def test_a_reader_reads_but_may_not_propose_run_or_interrupt(
    loop_mcp_session: Any, write_notebook: Any, jp_root_dir: Any, api: Any
) -> None:
    path = write_notebook("ro.ipynb", "print('hi')")
    async with loop_mcp_session() as session:
        read = await call(session, "read_cell", path=path, cell_id="c0")
        propose = await call(
            session, "propose_delete", path=path, cell_id="c0", summary="remove it"
        )
        run = await call(session, "run_cells", path=path, cell_ids=["c0"], wait_seconds=1)
        run_all = await call(session, "run_all", path=path, wait_seconds=1)
        interrupt = await call(session, "interrupt", path=path)
    assert not read.is_error and "print('hi')" in text_of(read)
    assert propose.is_error and "Forbidden" in text_of(propose)
    assert "contents:write" in text_of(propose)
    assert run.is_error and "kernels:execute and contents:write" in text_of(run)
    assert run_all.is_error and "kernels:execute and contents:write" in text_of(run_all)
    assert interrupt.is_error and "kernels:execute" in text_of(interrupt)
    assert "jupyter_loop:proposals" not in (jp_root_dir / path).read_text()
    journal = await api("api", "jupyter-loop", "agent", "journal", params={"path": path})
    refused = [e["details"] for e in journal["entries"] if not e["details"].get("ok")]
    assert [d["tool"] for d in refused] == ["propose_delete", "run_cells", "run_all", "interrupt"]


@pytest.mark.parametrize("authorizer", [*both("NoAccess"), *both("NoContents")])
async def test_a_user_who_may_not_read_contents_gets_403(
    loop_mcp_url: str, jp_auth_header: Any
) -> None:
    async with httpx2.AsyncClient(headers=dict(jp_auth_header)) as http:
        response = await http.post(
            loop_mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert response.status_code == 403
    assert "permission to read contents" in response.json()["error"]["message"]


async def test_a_client_that_keeps_no_cookies_keeps_its_session(
    loop_mcp_session: Any, loop_mcp_url: str, jp_auth_header: Any
) -> None:
    """Jupyter names each cookie-less token request a new random user; they all hold the
    server's one token, so the session they opened stays theirs."""
    minted: list[str] = []
    async with loop_mcp_session(session_ids=minted):
        headers = {
            **jp_auth_header,
            "Accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
            "mcp-session-id": minted[0],
        }
        async with httpx2.AsyncClient(headers=headers) as fresh:  # a new cookie jar
            listed = await fresh.post(
                loop_mcp_url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
            )
    assert listed.status_code == 200 and "read_cell" in listed.text
