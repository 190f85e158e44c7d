"""The words an outside agent reads (issue 43 §5, issue 42 §3): no "working memory" (it has
none: ``proposal_status`` says what became of a proposal), a scope refusal that says what
the token's scope allows rather than a Jupyter permission's name, and a new task that says
it waits for an approval only when one is needed. Driven by the MCP SDK's own client."""

from __future__ import annotations

import re
from typing import Any

import pytest
from authorizers import both
from mcp_helpers import bearer, call, make, text_of
from pycrdt import Map
from test_mcp_tasks import approve, finished, start_task, tasks_client

from jupyter_loop.testing.task_client import task_method

PERMISSION = re.compile(r"\b(contents|kernels):(read|write|execute)\b")
"""A Jupyter permission's name, as an outside agent should not be told it for a scope."""


async def test_a_proposals_reply_points_to_proposal_status_not_a_working_memory(
    loop_mcp_session: Any, write_notebook: Any
) -> None:
    path = write_notebook("memory.ipynb", "x = 1")
    async with loop_mcp_session() as session:
        listed = await session.list_tools()
        proposed = await call(
            session, "propose_modify", path=path, cell_id="c0", source="x = 2", summary="two"
        )
    words = [text_of(proposed), *(tool.description or "" for tool in listed.tools)]
    assert not [w for w in words if "working memory" in w]
    assert not proposed.is_error and "proposal_status" in text_of(proposed), text_of(proposed)


@pytest.mark.parametrize("authorizer", both("BobNoKernels"))  # ada, the maker, may do all
async def test_a_scope_refusal_says_what_the_tokens_scope_allows(
    authorizer: str, loop_mcp_session: Any, write_notebook: Any, api: Any
) -> None:
    path = write_notebook("scoped.ipynb", "print('hi')")
    reader = (await make(api, "read"))["token"]
    proposer = (await make(api, "propose"))["token"]
    async with loop_mcp_session(headers=bearer(reader)) as session:
        proposed = await call(session, "propose_delete", path=path, cell_id="c0", summary="x")
    async with loop_mcp_session(headers=bearer(proposer)) as session:
        ran = await call(session, "run_cells", path=path, cell_ids=["c0"], wait_seconds=1)
        stopped = await call(session, "interrupt", path=path)
    for result in (proposed, ran, stopped):
        assert result.is_error and not PERMISSION.search(text_of(result)), text_of(result)
    assert "this token's scope is read: it cannot propose edits" in text_of(proposed)
    assert "this token's scope is propose: it cannot run cells" in text_of(ran)
    assert "this token's scope is propose: it cannot interrupt" in text_of(stopped)
    assert "scope run" in text_of(ran)  # what would do


@pytest.mark.parametrize(
    "loop_config",
    [{"approval_policy": "always"}, {"approval_policy": "ask"}],
    ids=lambda c: c["approval_policy"],
)
async def test_a_new_task_says_it_waits_for_an_approval_only_when_one_is_needed(
    loop_config: dict[str, Any], loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("task.ipynb", "print('ran', 6 * 7)")
    async with open_tab(path) as tab, tasks_client(loop_mcp_session) as session:
        created = await start_task(session, path)
        state = await task_method(session, "tasks/get", created.task_id)
        message = state.status_message or ""
        if loop_config["approval_policy"] == "ask":
            assert "approv" in message, message
            await approve(api, tab, path)
        else:
            assert "approv" not in message.lower() and "waiting" not in message.lower(), message
        done = await finished(session, created.task_id)
        assert "approval" not in tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
    assert done.status == "completed", done
