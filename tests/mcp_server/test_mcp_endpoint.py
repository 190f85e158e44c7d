"""The MCP endpoint, driven by the MCP SDK's own Streamable HTTP client against a real server."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import mcp_types as types
import pytest
from loop_helpers import wait_for
from mcp_helpers import answer_approval, call, text_of
from pycrdt import Map

CANARY = "canary-7f3c9e21d4b8a6f0"


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"secrets": [CANARY], "external_approval_timeout": 60.0}


async def test_initialize_names_the_server_and_its_version(loop_mcp_session: Any) -> None:
    from jupyter_loop import __version__  # _version.py, written by the build

    async with loop_mcp_session() as session:
        result = await session.initialize()  # the handshake's answer, kept by the client
    assert result.server_info.name == "jupyter-loop"
    assert result.server_info.version == __version__ != ""


async def test_lists_the_tools(loop_mcp_session: Any) -> None:
    async with loop_mcp_session() as session:
        listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    assert {
        "list_notebooks",
        "read_notebook",
        "read_cell",
        "propose_modify",
        "propose_insert",
        "propose_delete",
        "proposal_status",
        "run_cells",
        "run_all",
        "get_outputs",
        "interrupt",
    } <= names
    run = next(tool for tool in listed.tools if tool.name == "run_cells")
    assert run.input_schema["required"][0] == "path"


async def ran(read_notebook: Any, path: str, cell_id: str) -> None:
    """Wait until the saved notebook shows the cell's run."""

    def done() -> bool:
        nb = read_notebook(path)
        return bool(nb) and any(c.get("id") == cell_id and c.get("outputs") for c in nb.cells)

    await wait_for(done)


async def test_reads_a_notebook_with_what_it_printed_masked(
    loop_mcp_session: Any,
    write_notebook: Any,
    start_kernel: Any,
    run_cells: Any,
    read_notebook: Any,
) -> None:
    path = write_notebook(
        "work/printed.ipynb", "x = 6 * 7\nprint('the answer is', x)", f"print('{CANARY}')"
    )
    await start_kernel(path)
    await run_cells(path, "c0", "c1")
    await ran(read_notebook, path, "c1")
    async with loop_mcp_session() as session:
        listed = text_of(await call(session, "list_notebooks"))
        view = await call(session, "read_notebook", path=path)
        cell = await call(session, "read_cell", path=path, cell_id="c1")
    assert path in listed.splitlines()
    text = text_of(view)
    assert not view.is_error
    assert "the answer is 42" in text  # only in the cell's output, never in a source
    assert "<notebook-data nonce=" in text
    assert CANARY not in text and CANARY not in text_of(cell)
    assert "••••" in text_of(cell)


async def test_a_proposal_shows_in_every_tab_and_its_accept_comes_back(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("fix.ipynb", "1/0")
    async with open_tab(path) as tab, loop_mcp_session() as session:
        result = await call(
            session, "propose_modify", path=path, cell_id="c0", source="1/1", summary="no zero"
        )
        assert not result.is_error, text_of(result)
        proposals = tab.notebook.ydoc.get("jupyter_loop:proposals", type=Map)
        shown = await wait_for(lambda: [dict(p) for p in proposals.values()])
        assert shown[0]["new_source"] == "1/1" and shown[0]["status"] == "pending"
        proposal_id = shown[0]["id"]
        assert proposal_id in text_of(result)
        await api(
            "api", "jupyter-loop", "agent", "proposals", proposal_id, "accept",
            method="POST", body={"path": path},
        )  # fmt: skip
        await wait_for(lambda: str(tab.notebook.ycells[0]["source"]) == "1/1")
        status = text_of(await call(session, "proposal_status", path=path, proposal_id=proposal_id))
    assert "status: accepted" in status


async def test_a_run_under_ask_waits_for_a_person_answering_over_rest(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """No tab opened a kernel: the run opens the notebook's session, as a tab would."""
    path = write_notebook("ask.ipynb", "for i in range(3):\n    print('line', i)")
    async with open_tab(path) as tab, loop_mcp_session(name="claude-code") as session:
        running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        approval = await wait_for(lambda: board.get("approval"))
        assert approval["cell_ids"] == ["c0"] and "claude-code" in approval["requested_by"]
        assert not running.done()
        await answer_approval(api, path, approval, "once")
        result = await running
        await wait_for(lambda: "approval" not in board)
        assert "line 2" in tab.text("c0")
    assert not result.is_error, text_of(result)
    assert "line 0" in text_of(result) and "→ ok" in text_of(result)
    journal = await api("api", "jupyter-loop", "agent", "journal", params={"path": path})
    by = {(e["action"], e["by"]) for e in journal["entries"]}
    assert ("approval", 'an MCP client of ada, calling itself "claude-code"') in by
    assert ("external_call", 'an MCP client of ada, calling itself "claude-code"') in by


async def test_without_a_token_the_endpoint_answers_401(loop_mcp_url: str) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            loop_mcp_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert response.status_code == 401
    assert "token" in response.json()["error"]["message"]


async def test_a_long_run_goes_on_past_the_wait_and_can_be_interrupted(
    loop_mcp_session: Any, write_notebook: Any, start_kernel: Any, open_tab: Any, api: Any
) -> None:
    slow = (
        "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
    )
    path = write_notebook("slow.ipynb", slow)
    await start_kernel(path)
    async with open_tab(path) as tab, loop_mcp_session() as session:
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        running = asyncio.ensure_future(
            call(session, "run_cells", path=path, cell_ids=["c0"], wait_seconds=0.5)
        )
        approval = await wait_for(lambda: board.get("approval"))
        await answer_approval(api, path, approval, "once")
        result = await running
        assert "still running" in text_of(result)
        await wait_for(lambda: "tick 3" in tab.text("c0"))
        outputs = text_of(await call(session, "get_outputs", path=path, cell_id="c0"))
        assert "running or queued" in outputs and "tick" in outputs
        stopped = await call(session, "interrupt", path=path)
        assert not stopped.is_error, text_of(stopped)
        await wait_for(lambda: (tab.marker("c0") or {}).get("state") == "done")
        outputs = text_of(await call(session, "get_outputs", path=path, cell_id="c0"))
    assert "idle" in outputs and "KeyboardInterrupt" in outputs
    assert "output_index" in outputs  # the pointer to the full output


PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)


async def test_images_come_back_as_image_content(
    loop_mcp_session: Any,
    write_notebook: Any,
    start_kernel: Any,
    run_cells: Any,
    read_notebook: Any,
) -> None:
    show = f"import base64\nfrom IPython.display import Image\nImage(base64.b64decode('{PNG}'))"
    path = write_notebook("plot.ipynb", show)
    await start_kernel(path)
    await run_cells(path, "c0")
    await ran(read_notebook, path, "c0")
    async with loop_mcp_session() as session:
        view = await call(session, "read_notebook", path=path)
        plain = await call(session, "read_notebook", path=path, images=False)
    images = [c for c in view.content if isinstance(c, types.ImageContent)]
    assert [(i.mime_type, i.data.strip()) for i in images] == [("image/png", PNG)]
    assert not [c for c in plain.content if isinstance(c, types.ImageContent)]


WIDE_PLOT = """\
import io
from PIL import Image
from IPython.display import Image as Shown, display
buffer = io.BytesIO()
Image.new("RGB", (3000, 1500), "teal").save(buffer, "PNG")
display(Shown(buffer.getvalue()))
for n in range(5):
    small = io.BytesIO()
    Image.new("RGB", (8, 8), (n * 40, 0, 0)).save(small, "PNG")
    display(Shown(small.getvalue()))
"""


def image_sizes(result: types.CallToolResult) -> list[tuple[str, tuple[int, int]]]:
    import base64
    import io

    from PIL import Image

    return [
        (c.mime_type, Image.open(io.BytesIO(base64.b64decode(c.data))).size)
        for c in result.content
        if isinstance(c, types.ImageContent)
    ]


async def test_plots_come_back_shrunk_from_read_cell_get_outputs_and_run_cells(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """Before: only read_notebook attached images, at full size; read_cell said
    ``[image/png 3000×1500, …]`` and nothing more."""
    path = write_notebook("wide.ipynb", WIDE_PLOT)
    async with open_tab(path) as tab, loop_mcp_session() as session:
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
        approval = await wait_for(lambda: board.get("approval"))
        await answer_approval(api, path, approval, "once")
        ran = await running
        read = await call(session, "read_cell", path=path, cell_id="c0")
        outputs = await call(session, "get_outputs", path=path, cell_id="c0")
        one = await call(session, "read_cell", path=path, cell_id="c0", output_index=0)
        notebook = await call(session, "read_notebook", path=path, focus_cell_ids=["c0"])
    first_four = [("image/png", (1024, 512))] + [("image/png", (8, 8))] * 3
    for result in (ran, read, outputs, notebook):
        assert not result.is_error, text_of(result)
        assert image_sizes(result) == first_four, text_of(result)
        assert "attached as image 1" in text_of(result)
        assert text_of(result).count("[image/png 8×8, 75 B]") >= 2  # past the four: described
    assert image_sizes(one) == [("image/png", (1024, 512))]


async def test_allowed_for_the_turn_lasts_as_long_as_the_mcp_session(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("turn.ipynb", "print('again')")
    async with open_tab(path) as tab:
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        async with loop_mcp_session() as session:
            first = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
            approval = await wait_for(lambda: board.get("approval"))
            await answer_approval(api, path, approval, "turn")
            assert not (await first).is_error
            again = await call(session, "run_cells", path=path, cell_ids=["c0"])
            assert not again.is_error and "again" in text_of(again)
        async with loop_mcp_session() as session:  # a new session is asked again
            second = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
            approval = await wait_for(lambda: board.get("approval"))
            await answer_approval(api, path, approval, "deny")
            denied = await second
    assert denied.is_error and "denied running c0" in text_of(denied)
