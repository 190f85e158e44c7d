"""Within MCP hosts' limits (issue 43 §4), through the official SDK client against a real
server: a read over the limit comes in pages, each within it, read on with a cursor, the
text masked whole before it was cut; a call still working sends progress notifications to
a client that asked for them (hosts give up on a silent call)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_helpers import text_of

from jupyter_loop.notebook_view.notebook_map import estimate_tokens

CANARY = "canary-5d1f0b9e7a3c2468"
LIMIT = 1_000


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {
        "secrets": [CANARY],
        "approval_policy": "always",
        "mcp_result_tokens": LIMIT,
        "mcp_progress_interval": 0.3,
    }


async def test_a_long_read_comes_in_pages_within_the_limit(
    loop_mcp_session: Any, write_notebook: Any
) -> None:
    lines = [f"# line {i:04d} " + ("x" * 80 if i != 50 else CANARY) for i in range(100)]
    path = write_notebook("long.ipynb", "\n".join(lines))
    pages: list[str] = []
    async with loop_mcp_session() as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "cursor" in listed["read_cell"].input_schema["properties"]
        assert "cursor" not in listed["run_cells"].input_schema["properties"]
        cursor = ""
        for _ in range(20):
            arguments = {"path": path, "cell_id": "c0", "cursor": cursor or None}
            result = await session.call_tool("read_cell", arguments)
            assert not result.is_error, text_of(result)
            pages.append(text_of(result))
            if 'cursor="' not in pages[-1]:
                break
            cursor = pages[-1].rsplit('cursor="', 1)[1].split('"')[0]
        bad = await session.call_tool("read_cell", {"path": path, "cell_id": "c0", "cursor": "x"})
    assert len(pages) >= 3, pages
    assert all(estimate_tokens(page) <= LIMIT + 40 for page in pages)  # + the cut's note
    whole = "".join(pages)
    assert all(f"# line {i:04d}" in whole for i in range(100))
    assert CANARY[:12] not in whole and "••••" in whole  # masked whole, then cut
    assert bad.is_error and "'cursor'" in text_of(bad)


async def test_a_call_still_working_sends_progress(
    loop_mcp_session: Any, write_notebook: Any
) -> None:
    path = write_notebook("slow.ipynb", "import time\ntime.sleep(2)\nprint('slept')")
    seen: list[tuple[float, str | None]] = []

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with loop_mcp_session() as session:
        result = await session.call_tool(
            "run_cells", {"path": path, "cell_ids": ["c0"]}, progress_callback=progressed
        )
    assert "slept" in text_of(result), text_of(result)
    assert len(seen) >= 2, seen
    assert "Still working" in (seen[0][1] or "")
