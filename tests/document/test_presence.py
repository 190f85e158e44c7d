"""Who has a notebook open and which cell they have in hand, read by an outside agent:
a tab publishes its person's active and selected cells in the room's awareness (as the
browser extension does), and MCP's ``read_notebook`` says where each person is and
shows their active cell in full, so "fix this cell" works from outside JupyterLab."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
import pytest
from loop_helpers import wait_for
from mcp_helpers import answer_approval, call
from pycrdt import Map

from jupyter_loop.access.identity import server_login_name
from jupyter_loop.document.presence import RENEW_SECONDS
from jupyter_loop.records import AGENT_FIELD, FOCUS_FIELD
from jupyter_loop.testing.yjs import read_with_yjs

MANY = [f"x{i} = {i}" for i in range(12)]


def text_of(result: types.CallToolResult) -> str:
    return "".join(item.text for item in result.content if isinstance(item, types.TextContent))


async def test_read_notebook_says_which_cell_each_person_has_in_hand(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any
) -> None:
    path = write_notebook("where.ipynb", *MANY, "def broken(:\n    return 'needle-7c1'")
    async with open_tab(path) as ada, open_tab(path) as bob, loop_mcp_session() as session:
        await ada.say(
            {
                "user": {"name": "ada", "display_name": "Ada Lovelace"},
                FOCUS_FIELD: {"cell_id": "c12", "selected_cell_ids": ["c11", "c12"]},
            }
        )
        await bob.say({"user": {"name": "bob"}})

        text = await read_until(session, path, lambda t: '"Ada Lovelace"' in t and '"bob"' in t)
        assert '- "Ada Lovelace": cell 13 (id c12) active; also selected: cell 12 (id c11)' in text
        assert '- "bob": no cell active' in text
        assert "needle-7c1" in text  # her cell is shown in full, though it never ran

        await ada.say(None)  # she closes her tab
        text = await read_until(session, path, lambda t: "Ada Lovelace" not in t)
        assert '- "bob": no cell active' in text


async def test_the_current_cell_resource_is_the_cell_its_person_has_active(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any
) -> None:
    """ "Fix this cell" from an outside agent: the resource names the cell the person the
    agent works for has active (the server's own token: its login name); with nobody of
    that name, the one cell anybody has active (a tab's name may differ from the token's),
    and no cell when several people have one."""
    path = write_notebook("this.ipynb", *MANY, "def broken(:\n    return 'needle-3e9d'")
    me = server_login_name()
    uri = f"jupyter-loop://focus?path={path}"
    async with (
        open_tab(path) as ada,
        open_tab(path) as bob,
        open_tab(path) as mine,
        loop_mcp_session() as session,
    ):
        listed = await session.list_resource_templates()
        templates = [t.uri_template for t in listed.resource_templates]
        assert "jupyter-loop://focus{?path}" in templates
        await ada.say({"user": {"name": "ada"}, FOCUS_FIELD: {"cell_id": "c3"}})
        text = await resource_until(session, uri, lambda t: "x3 = 3" in t)
        assert 'The cell "ada" has active in this.ipynb: id c3.' in text

        await bob.say({"user": {"name": "bob"}, FOCUS_FIELD: {"cell_id": "c5"}})
        text = await resource_until(session, uri, lambda t: '"bob"' in t)
        assert f"{json.dumps(me)} has no cell of {path} active" in text
        assert '- "ada": cell 4 (id c3) active' in text
        assert '- "bob": cell 6 (id c5) active' in text

        await mine.say({"user": {"name": me}, FOCUS_FIELD: {"cell_id": "c12"}})
        text = await resource_until(session, uri, lambda t: "needle-3e9d" in t)
        assert f"The cell {json.dumps(me)} has active in {path}: id c12." in text
        assert "x3 = 3" not in text and "x5 = 5" not in text


async def resource_until(session: Any, uri: str, wanted: Any, timeout: float = 10.0) -> str:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await session.read_resource(uri)
        text = "".join(getattr(item, "text", "") for item in result.contents)
        if wanted(text) or asyncio.get_running_loop().time() > deadline:
            assert wanted(text), text
            return text
        await asyncio.sleep(0.1)


async def read_until(session: Any, path: str, wanted: Any, timeout: float = 10.0) -> str:
    """``read_notebook``'s text once ``wanted(text)``; fails with the last text after
    ``timeout`` (awareness reaches the server on its own connection, a moment later)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        text = text_of(await call(session, "read_notebook", path=path))
        if wanted(text) or asyncio.get_running_loop().time() > deadline:
            assert wanted(text), text
            return text
        await asyncio.sleep(0.1)


async def test_a_notebook_nobody_has_open_lists_nobody(loop_mcp_session: Any, write_notebook: Any):
    path = write_notebook("alone.ipynb", "x = 1")
    async with loop_mcp_session() as session:
        text = text_of(await call(session, "read_notebook", path=path))
    assert "People with this notebook open" not in text and "x = 1" in text


async def test_an_agent_at_work_is_shown_in_the_tabs_on_the_cell_it_works_on(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any
) -> None:
    path = write_notebook("watched.ipynb", "a = 1", "b = 2")
    async with open_tab(path) as tab, loop_mcp_session(name="claude-code") as session:
        await call(session, "read_cell", path=path, cell_id="c1")
        await wait_until(lambda: tab.agents())
        [(name, work)] = tab.agents()
        assert work == {"cell_id": "c1", "action": "reading"}
        assert name.startswith("claude-code for ")

        await call(session, "propose_modify", path=path, cell_id="c0", source="a = 2", summary="s")
        await wait_until(lambda: tab.agents() and tab.agents()[0][1]["cell_id"] == "c0")
        assert tab.agents() == [(name, {"cell_id": "c0", "action": "proposing a change"})]

        # People in the notebook are the tabs' people: the agent is not one of them.
        text = text_of(await call(session, "read_notebook", path=path))
        assert "claude-code for" not in text


async def test_an_agents_caret_shows_at_the_end_of_the_cell_it_works_on(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any
) -> None:
    """jupyter-collaboration's editors draw a collaborator's caret from the ``cursors``
    of its awareness entry: the agent's is at the end of the cell it works on, as the
    browser's library (Yjs) resolves it, in the cell's source, not another's."""
    path = write_notebook("caret.ipynb", "a = 1", "é = '😀'  # b")
    async with open_tab(path) as tab, loop_mcp_session(name="claude-code") as session:
        await call(session, "read_cell", path=path, cell_id="c1")
        await wait_until(lambda: carets(tab))
        await call(session, "propose_modify", path=path, cell_id="c0", source="a = 2", summary="s")
        await wait_until(lambda: tab.agents() and tab.agents()[0][1]["cell_id"] == "c0")
        (caret,) = carets(tab)
        update = tab.notebook.ydoc.get_update()
        (seen,) = read_with_yjs({"tab": [update]}, positions={"tab": [caret]}).values()
        assert seen.positions == [[0, len("a = 1")]]

        await call(session, "read_cell", path=path, cell_id="c1")
        await wait_until(lambda: tab.agents()[0][1]["cell_id"] == "c1")
        (caret,) = carets(tab)
        update = tab.notebook.ydoc.get_update()
        (seen,) = read_with_yjs({"tab": [update]}, positions={"tab": [caret]}).values()
        assert seen.positions == [[1, len("é = '😀'  # b".encode("utf-16-le")) // 2]]


def carets(tab: Any) -> list[dict[str, Any]]:
    """The carets of the agents in the tab's awareness (anchor and head are one)."""
    found = []
    for state in tab._awareness.states.values():
        for cursor in (state or {}).get("cursors", []) if AGENT_FIELD in (state or {}) else []:
            assert cursor["anchor"] == cursor["head"] and cursor["primary"] is True
            found.append(cursor["head"])
    return found


@pytest.mark.timeout(90)
async def test_an_agent_stays_shown_on_its_cell_for_the_whole_of_a_long_run(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """A call that stops waiting leaves its cells running: tabs would forget the agent 30 s
    after that call, so the server shows it again every RENEW_SECONDS while they run, and
    stops once they are done."""
    long = RENEW_SECONDS * 1.5
    path = write_notebook("long.ipynb", "a = 1", f"import time\ntime.sleep({long})")
    async with open_tab(path) as tab, loop_mcp_session(name="claude-code") as session:
        asked = asyncio.ensure_future(
            call(session, "run_cells", path=path, cell_ids=["c1"], wait_seconds=0)
        )
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        await answer_approval(api, path, await wait_for(lambda: board.get("approval")), "once")
        result = await asked
        assert "running" in text_of(result), text_of(result)
        await wait_until(lambda: tab.marker("c1") and tab.marker("c1")["state"] == "running")
        shown = agent_clock(tab)

        await wait_until(lambda: agent_clock(tab) > shown, timeout=RENEW_SECONDS + 5)
        assert tab.agents()[0][1] == {"cell_id": "c1", "action": "running"}
        await wait_until(lambda: tab.marker("c1")["state"] == "done", timeout=long + 10)
        last = agent_clock(tab)
        await asyncio.sleep(RENEW_SECONDS + 1)
        assert agent_clock(tab) == last  # done: no more renewals


def agent_clock(tab: Any) -> int:
    """The clock of the agent's awareness entry as the tab last heard it (each renewal
    is newer)."""
    (client,) = [c for c, s in tab._awareness.states.items() if s and AGENT_FIELD in s]
    return int(tab._awareness.meta[client]["clock"])


async def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)
