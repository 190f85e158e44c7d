"""Each MCP tool needs the rights its REST counterpart needs (the server's authorizer decides)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from jupyter_server.auth.authorizer import Authorizer
from mcp_helpers import call, text_of
from traitlets.config import Config

pytest_plugins = ["mcp_fixtures"]


class ReadOnlyAuthorizer(Authorizer):
    """A user who may read files but neither edit them nor execute code."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return action == "read"


class NoAccessAuthorizer(Authorizer):
    """A user the server knows but who may do nothing."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return False


@pytest.fixture
def authorizer_class() -> type[Authorizer]:
    return ReadOnlyAuthorizer


@pytest.fixture
def jp_server_config(jp_server_config: Config, authorizer_class: type[Authorizer]) -> Config:
    jp_server_config.ServerApp.authorizer_class = authorizer_class
    return jp_server_config


async def test_a_reader_reads_but_may_not_propose_or_run(
    mcp_session: Any, write_notebook: Any, jp_root_dir: Any, api: Any
) -> None:
    path = write_notebook("ro.ipynb", "print('hi')")
    async with mcp_session() as session:
        read = await call(session, "read_cell", path=path, cell_id="c0")
        propose = await call(
            session, "propose_delete", path=path, cell_id="c0", summary="remove it"
        )
        run = await call(session, "run_cells", path=path, cell_ids=["c0"])
    assert not read.is_error and "print('hi')" in text_of(read)
    assert propose.is_error and "Forbidden" in text_of(propose)
    assert "contents:write" in text_of(propose)
    assert run.is_error and "kernels:execute and contents:write" in text_of(run)
    assert "jupyter_loop:proposals" not in (jp_root_dir / path).read_text()
    journal = await api("api", "jupyter-loop", "agent", "journal", params={"path": path})
    refused = [e["details"] for e in journal["entries"] if not e["details"].get("ok")]
    assert [d["tool"] for d in refused] == ["propose_delete", "run_cells"]


@pytest.mark.parametrize("authorizer_class", [NoAccessAuthorizer])
async def test_a_user_without_any_right_gets_403(mcp_url: str, jp_auth_header: Any) -> None:
    async with httpx2.AsyncClient(headers=dict(jp_auth_header)) as http:
        response = await http.post(
            mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert response.status_code == 403
    assert "permission to read contents" in response.json()["message"]
