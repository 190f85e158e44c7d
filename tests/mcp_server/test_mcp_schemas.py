"""What every MCP host and model accepts (issue 43 §4), through the official SDK client
against a real server: an optional argument sent as ``null`` is not given (mcp-use sends
``null`` for each optional left out), schemas without union types, a title and hints on
every tool (hosts auto-allow reads by them), and each attached image once (not also as a
link, which langchain turned into an unusable ``image_url``)."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from loop_helpers import wait_for
from mcp_helpers import call, text_of

READS = {
    "list_notebooks",
    "read_notebook",
    "notebook_map",
    "read_cell",
    "proposal_status",
    "get_outputs",
    "cell_history",
}


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"approval_policy": "always"}


def unions(schema: Any, where: str = "") -> list[str]:
    """Where ``schema`` has a ``type`` that is a list (``["string", "null"]``)."""
    found: list[str] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            found.append(where or "(root)")
        for key, value in schema.items():
            found += unions(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += unions(value, f"{where}/{index}")
    return found


async def test_every_tool_has_a_title_hints_and_no_union_types(loop_mcp_session: Any) -> None:
    async with loop_mcp_session() as session:
        listed = await session.list_tools()
    for tool in listed.tools:
        assert unions(tool.input_schema) == [], tool.name
        assert tool.title, tool.name
        hints = tool.annotations
        assert hints is not None, tool.name
        assert hints.read_only_hint is (tool.name in READS), tool.name
        for hint in (hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint):
            assert isinstance(hint, bool), tool.name
    by_name = {tool.name: tool for tool in listed.tools}
    assert by_name["run_cells"].annotations.open_world_hint is True  # code reaches anything
    assert by_name["propose_modify"].annotations.destructive_hint is False  # until accepted


async def test_optional_arguments_sent_as_null_are_not_given(
    loop_mcp_session: Any,
    write_notebook: Any,
    start_kernel: Any,
    run_cells: Any,
    read_notebook: Any,
) -> None:
    path = write_notebook("nulls.ipynb", "print('hi')", "x = 1")
    await start_kernel(path)
    await run_cells(path, "c0")
    await wait_for(lambda: any(c.get("outputs") for c in read_notebook(path).cells))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_notebook", {"focus_cell_ids": None, "images": None}),
        ("notebook_map", {"start": None, "count": None}),
        ("read_cell", {"cell_id": "c0", "output_index": None, "offset": None}),
        ("cell_history", {"cell_id": "c0", "limit": None}),
        ("propose_insert", {"after_cell_id": None, "cell_type": None, "source": "y = 2",
                            "summary": "add y"}),
        ("run_cells", {"cell_ids": ["c1"], "wait_seconds": None}),
        ("run_all", {"wait_seconds": None}),
    ]  # fmt: skip
    async with loop_mcp_session() as session:
        for name, arguments in calls:
            result = await call(session, name, path=path, **arguments)
            assert not result.is_error, (name, text_of(result))
        inserted = text_of(await call(session, "propose_insert", path=path, source="z",
                                      summary="top", after_cell_id=None))  # fmt: skip
        missing = await call(session, "read_cell", path=path, cell_id=None)
    assert "at the top" in inserted
    assert missing.is_error and "'cell_id'" in text_of(missing)  # a required one stays so


SIX_PLOTS = """\
import io
from PIL import Image
from IPython.display import Image as Shown, display
for n in range(6):
    small = io.BytesIO()
    Image.new("RGB", (8, 8), (n * 40, 0, 0)).save(small, "PNG")
    display(Shown(small.getvalue()))
"""


async def test_an_attached_image_is_not_also_linked(
    loop_mcp_session: Any,
    write_notebook: Any,
    start_kernel: Any,
    run_cells: Any,
    read_notebook: Any,
) -> None:
    """Four images go inline (the budget); only the two left out come as links."""
    path = write_notebook("plots.ipynb", SIX_PLOTS)
    await start_kernel(path)
    await run_cells(path, "c0")
    await wait_for(lambda: len(read_notebook(path).cells[0].get("outputs") or []) == 6)
    async with loop_mcp_session() as session:
        results = [
            await call(session, "read_cell", path=path, cell_id="c0"),
            await call(session, "get_outputs", path=path, cell_id="c0"),
            await call(session, "run_cells", path=path, cell_ids=["c0"]),
        ]
    for result in results:
        assert not result.is_error, text_of(result)
        inline = [c for c in result.content if isinstance(c, types.ImageContent)]
        links = [c for c in result.content if isinstance(c, types.ResourceLink)]
        assert len(inline) == 4, text_of(result)
        assert [link.uri.split("?")[0][-1] for link in links] == ["4", "5"], links
