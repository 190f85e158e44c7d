"""An output the notebook keeps only part of, read whole as an MCP resource.

A run over the notebook's output budget leaves stand-ins in the cell: the marker of a
stream's cut middle, a placeholder for a rich output too big to keep. Their links read
what the full-output store kept (the whole run's text, the rich output whole), masked
whole; read with the MCP SDK's client against a real server and kernel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from loop_helpers import wait_for
from mcp_helpers import call

CANARY = "canary-5d0c2b7e13f9a846"
CELL = (
    "from IPython.display import HTML, display\n"
    f"for i in range(3000):\n    print('line', i, '{CANARY}' if i == 1500 else '')\n"
    f"display(HTML('<p>' + 'y' * 60000 + '{CANARY}</p>'))"
)


@pytest.fixture
def loop_config(tmp_path: Path) -> dict[str, Any]:
    return {
        "data_dir": str(tmp_path / "loop"),
        "output_budget_bytes": 32 * 1024,
        "secrets": [CANARY],
    }


async def test_stand_ins_link_what_the_server_kept_whole_and_masked(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, run_cells: Any, start_kernel: Any
) -> None:
    path = write_notebook("kept.ipynb", CELL)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") is not None, timeout=60)
        shown = str(tab.cell("c0")["outputs"])
    assert "line 1500" not in shown and "y" * 60000 not in shown  # the notebook keeps part
    async with loop_mcp_session() as session:
        result = await call(session, "get_outputs", path=path, cell_id="c0")
        links = [c for c in result.content if isinstance(c, types.ResourceLink)]
        assert [link.size for link in links][1::2] == [21573, 60071]  # what was left out
        texts = []
        for link in links:
            [content] = (await session.read_resource(link.uri)).contents
            assert isinstance(content, types.TextResourceContents)
            texts.append(content.text)
    whole_run = next(t for t in texts if "line 1500" in t)
    assert "line 0 " in whole_run and "line 2999" in whole_run
    assert any("y" * 60000 in t for t in texts)
    assert all(CANARY not in t for t in texts)  # masked whole, before anything is cut
