"""An MCP client that gives up on a run while its approval waits (its read time-out sends a
cancellation; or it closes the connection) leaves nothing behind: the notebook's approval
slot is free at once for the next agent, and the card is gone from every tab. Driven by
the MCP SDK's own client against a real server and kernel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from loop_helpers import wait_for
from mcp.shared.exceptions import MCPError
from mcp_helpers import answer_approval, call, text_of
from pycrdt import Map


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"external_approval_timeout": 120.0}  # far longer than the test waits


async def never_asked(context: Any, params: Any) -> Any:
    raise AssertionError("the client is not asked to approve (mcp_client_approvals is off)")


@pytest.mark.parametrize(
    "how", ["its read time-out", "closing its connection", "a 2026 client's read time-out"]
)
async def test_a_client_giving_up_on_its_approval_frees_the_notebooks_slot_at_once(
    how: str, loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("given-up.ipynb", "print('first')", "print('second', 6 * 7)")
    async with open_tab(path) as tab:
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        # A 2026 client that shows forms has its call held between requests (held_calls.py).
        modern = how.startswith("a 2026")
        form = never_asked if modern else None
        async with loop_mcp_session(name="impatient", modern=modern, elicitation=form) as session:
            arguments = {"path": path, "cell_ids": ["c0"]}
            if how.endswith("read time-out"):
                with pytest.raises(MCPError):
                    await session.call_tool("run_cells", arguments, read_timeout_seconds=2)
                first = dict(board["approval"])  # the card was shown while it waited
            else:
                running = asyncio.ensure_future(session.call_tool("run_cells", arguments))
                first = dict(await wait_for(lambda: board.get("approval")))
                running.cancel()
        # The card goes from the tab at once (not after the 120 s approval time-out).
        await wait_for(lambda: "approval" not in board, timeout=5)
        with pytest.raises(Exception, match="409|404"):  # the given-up approval is closed
            await answer_approval(api, path, first, "deny")
        assert tab.cell("c0").get("execution_count") is None

        # The next agent's run is asked, not refused with "Another approval is waiting".
        async with loop_mcp_session(name="patient") as session:
            running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c1"]))
            second = await wait_for(lambda: board.get("approval") or running.done(), timeout=10)
            assert not running.done(), text_of(running.result())
            assert second["id"] != first["id"]
            await answer_approval(api, path, dict(second), "once")
            result = await running
    assert "second 42" in text_of(result), text_of(result)
