"""Cell outputs as MCP resources, read with the MCP SDK's own client against a real server
and kernel: get_outputs links a cell's long output with a caption (its image comes inline,
and is not linked again: issue 43); reading a link gives the output whole (text masked
whole, the image's bytes); a link of an earlier run, a bad URI and a caller without the
right to read are refused plainly."""

from __future__ import annotations

import base64
from typing import Any

import mcp_types as types
import pytest
from authorizers import both
from loop_helpers import wait_for
from mcp.shared.exceptions import MCPError
from mcp_helpers import call

CANARY = "canary-0b7e5c1d94a2f836"
# A 1×1 PNG.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
CELL = (
    "import base64\nfrom IPython.display import Image, display\n"
    "print('short')\n"
    f"display(Image(data=base64.b64decode('{PNG}')))\n"
    f"print('x' * 3000, '{CANARY}', 'end of the long line')"
)


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {
        "secrets": [CANARY],
        "mcp_client_approvals": True,
    }  # run_cells is approved in the client


def links_of(result: types.CallToolResult) -> list[types.ResourceLink]:
    return [item for item in result.content if isinstance(item, types.ResourceLink)]


async def ran(path: str, run_cells: Any, open_tab: Any, start_kernel: Any) -> None:
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") is not None)
        await wait_for(lambda: len(tab.cell("c0")["outputs"]) == 3)


async def test_an_image_and_a_long_output_are_links_read_whole_and_masked(
    loop_mcp_session: Any,
    write_notebook: Any,
    open_tab: Any,
    run_cells: Any,
    start_kernel: Any,
    api: Any,
) -> None:
    path = write_notebook("res.ipynb", CELL)
    await ran(path, run_cells, open_tab, start_kernel)
    async with loop_mcp_session(name="claude-code") as session:
        templates = await session.list_resource_templates()
        assert templates.resource_templates[0].uri_template.startswith("jupyter-loop://")
        result = await call(session, "get_outputs", path=path, cell_id="c0")
        # "short" (its own stream output) is inline only; the image inline, not linked too
        [long] = links_of(result)
        assert long.mime_type == "text/plain" and (long.size or 0) > 3000
        assert CANARY not in (long.description or "")
        assert [c.mime_type for c in result.content if isinstance(c, types.ImageContent)] == [
            "image/png"
        ]
        image = long.model_copy(update={"uri": long.uri.replace("/c0/2?", "/c0/1?")})

        [text] = (await session.read_resource(long.uri)).contents
        assert isinstance(text, types.TextResourceContents)
        assert text.text.startswith("x" * 3000) and "end of the long line" in text.text
        assert CANARY not in text.text  # masked whole, though over any excerpt's length
        [blob] = (await session.read_resource(image.uri)).contents
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == base64.b64decode(PNG)

        # read_cell gives the same links beside the cell it shows.
        read = await call(session, "read_cell", path=path, cell_id="c0")
        assert [link.uri for link in links_of(read)] == [long.uri]

        # The cell runs again: its old links say so, get_outputs gives new ones.
        await ran(path, run_cells, open_tab, start_kernel)
        with pytest.raises(MCPError, match="ran again since this link was made"):
            await session.read_resource(long.uri)
        fresh = links_of(await call(session, "get_outputs", path=path, cell_id="c0"))
        assert [link.uri for link in fresh] != [long.uri]
        with pytest.raises(MCPError, match="No resource"):
            await session.read_resource("jupyter-loop://outputs/c0/x?path=res.ipynb&run=r")
    journal = await api("api", "jupyter-loop", "agent", "journal", params={"path": path})
    calls = [e["details"] for e in journal["entries"] if e["action"] == "external_call"]
    reads = [(c["ok"], c["receipt"]) for c in calls if c["tool"] == "read_resource"]
    assert reads[:2] == [(True, "output 2 of c0"), (True, "output 1 of c0")], reads
    assert reads[2][0] is False and "ran again" in reads[2][1]


@pytest.mark.parametrize("authorizer", both("BobNoKernels"))  # ada may read
async def test_a_token_for_another_notebook_cannot_read_its_outputs(
    authorizer: str, loop_mcp_session: Any, write_notebook: Any, api: Any
) -> None:
    """The rights of reading a resource are a tool's (the endpoint's one check), under a
    plain and an async authorizer: here a token made for one notebook only."""
    write_notebook("mine.ipynb", "1")
    write_notebook("other.ipynb", "2")
    body = {"scope": "read", "notebook": "mine.ipynb"}
    made = await api("api", "jupyter-loop", "tokens", method="POST", body=body)
    headers = {"Authorization": f"Bearer {made['token']}"}
    async with loop_mcp_session(headers=headers) as session:
        with pytest.raises(MCPError, match="this token is for the notebook mine.ipynb only"):
            await session.read_resource("jupyter-loop://outputs/c0/0?path=other.ipynb&run=file")
        with pytest.raises(MCPError, match="this token is for the notebook mine.ipynb only"):
            await session.read_resource("jupyter-loop://focus?path=other.ipynb")
        with pytest.raises(MCPError, match="has no output 0"):  # its own: read, no output
            await session.read_resource("jupyter-loop://outputs/c0/0?path=mine.ipynb&run=file")


async def test_run_cells_links_the_outputs_of_the_cells_it_ran(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any
) -> None:
    path = write_notebook("ran.ipynb", CELL)

    async def approve_once(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"decision": "once"})

    async with (
        open_tab(path),
        loop_mcp_session(name="claude-code", elicitation=approve_once) as session,
    ):
        result = await call(session, "run_cells", path=path, cell_ids=["c0"])
        assert not result.is_error
        [long] = links_of(result)  # the image is inline, not linked again
        assert long.mime_type == "text/plain"
        assert any(isinstance(c, types.ImageContent) for c in result.content)
        [text] = (await session.read_resource(long.uri)).contents
        assert isinstance(text, types.TextResourceContents)
        assert "end of the long line" in text.text and CANARY not in text.text
