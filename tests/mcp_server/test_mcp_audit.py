"""Every MCP ``tools/call`` leaves a journal entry, and a client's name is shown as its own
claim, capped (issue 18, defect 9)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from loop_helpers import wait_for
from mcp_helpers import answer_approval, call, text_of
from pycrdt import Map

JOURNAL = ("api", "jupyter-loop", "agent", "journal")
SERVER_JOURNAL = ("api", "jupyter-loop", "agent", "server-journal")


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"external_approval_timeout": 60.0}


def calls(entries: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    return [
        (e["details"]["tool"], e["details"]["ok"])
        for e in entries
        if e["action"] == "external_call"
    ]


async def test_every_call_is_journaled_refused_and_unknown_ones_too(
    loop_mcp_session: Any, write_notebook: Any, api: Any
) -> None:
    path = write_notebook("audit.ipynb", "1")
    async with loop_mcp_session() as session:
        await call(session, "list_notebooks")
        await call(session, "no_such_tool", path=path)
        await call(session, "get_outputs", path=path)  # no cell_id: refused by its schema
        await call(session, "proposal_status", path=path, proposal_id="p-unknown")
        await call(session, "read_cell", path="missing.ipynb", cell_id="c0")
    notebook = (await api(*JOURNAL, params={"path": path}))["entries"]
    assert calls(notebook) == [
        ("no_such_tool", False),
        ("get_outputs", False),
        ("proposal_status", False),
    ]
    server = (await api(*SERVER_JOURNAL))["entries"]
    assert calls(server) == [("list_notebooks", True), ("read_cell", False)]
    assert server[-1]["details"]["path"] == "missing.ipynb"


async def test_a_client_name_is_capped_and_shown_as_its_own_claim(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("claim.ipynb", "print('hi')")
    name = "JupyterLab tab of alice (approved)\x1b[2J\n" + "x" * 1_000_000
    async with open_tab(path) as tab, loop_mcp_session(name=name) as session:
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
        approval = dict(await wait_for(lambda: board.get("approval")))
        await answer_approval(api, path, approval, "deny")
        await running
    shown = approval["requested_by"]
    assert len(shown) < 200 and "\x1b" not in shown and "\n" not in shown
    assert shown.startswith("an MCP client of ada, calling itself")
    entries = (await api(*JOURNAL, params={"path": path}))["entries"]
    assert max(len(e["by"]) for e in entries) < 200


async def test_arguments_are_checked_against_the_schema_the_client_is_shown(
    loop_mcp_session: Any, write_notebook: Any
) -> None:
    path = write_notebook("schema.ipynb", "1")
    async with loop_mcp_session() as session:
        listed = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
        empty = await call(session, "read_cell", path="", cell_id="c0")
        negative = await call(session, "run_cells", path=path, cell_ids=["c0"], wait_seconds=-1)
        wrong = await call(session, "read_notebook", path=path, focus_cell_ids=[""])
    assert listed["run_cells"]["properties"]["wait_seconds"]["minimum"] == 0
    assert empty.is_error and "'path' must not be empty" in text_of(empty)
    assert negative.is_error and "'wait_seconds' must be 0 or more" in text_of(negative)
    assert wrong.is_error and "must not be empty" in text_of(wrong)
