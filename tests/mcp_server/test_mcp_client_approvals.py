"""Who approves an agent's run (issue 42, D19). An MCP client's form (elicitation) is
answered by the client's host, the agent's own program, which can answer it with no person
involved: by default it does not approve, and the run waits for a person in a tab or at
``jupyter loop approve``; only ``mcp_client_approvals`` lets the client's answer count. A
cell's ``input()`` is the person's own data entry, asked in the client either way. The
journal says where each answer was given. Driven by the MCP SDK's own client against a
real server and kernel, and the real terminal client."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

import mcp_types as types
import pytest
from authorizers import both
from loop_helpers import wait_for
from mcp_helpers import ASKS_NAME, answer_approval, approvals_of, call, text_of
from pycrdt import Map
from test_mcp_elicitation import modern_client

OPTED_IN = {"external_approval_timeout": 60.0, "mcp_client_approvals": True}


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"external_approval_timeout": 60.0}  # the default: clients do not approve


def host_says_yes(forms: list[Any]) -> Any:
    """A client whose host answers every form itself, at once: approvals with "allow for
    the rest of the session", a cell's ``input()`` with ``Ada``."""

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        forms.append(params)
        if "decision" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"decision": "turn"})
        return types.ElicitResult(action="accept", content={"answer": "Ada"})

    return answer


def approval_forms(forms: list[Any]) -> list[Any]:
    return [f for f in forms if "decision" in f.requested_schema["properties"]]


async def waits_for_a_person(running: asyncio.Future[Any], board: Map) -> dict[str, Any]:
    """The card a run waits on in the tab; the run is still waiting a moment later."""
    await wait_for(lambda: board.get("approval") or running.done())
    assert not running.done(), text_of(running.result())  # it ran with no person involved
    card = dict(board["approval"])
    await asyncio.sleep(1.0)  # time enough for a self-answered form to reach the server
    assert not running.done(), text_of(running.result())
    return card


@pytest.mark.parametrize("authorizer", both("BobNoKernels"))  # ada may run
async def test_by_default_a_clients_own_answer_does_not_approve_its_run(
    authorizer: str, loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """Under a plain and an ``async def is_authorized`` authorizer alike: no approval form
    is put to the client, each run waits for a tab, and a tab's answer leaves no "allow
    for the session" behind for the client."""
    path = write_notebook("mine.ipynb", "print('first', 6 * 7)", "print('second')")
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        loop_mcp_session(name="claude-code", elicitation=host_says_yes(forms)) as session,
    ):
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        for cell_id in ("c0", "c1"):
            running = asyncio.ensure_future(
                call(session, "run_cells", path=path, cell_ids=[cell_id])
            )
            card = await waits_for_a_person(running, board)
            assert tab.cell(cell_id).get("execution_count") is None
            await answer_approval(api, path, card, "once")
            result = await running
            assert not result.is_error, text_of(result)
    assert "first 42" in tab.text("c0") and "second" in tab.text("c1")
    assert not approval_forms(forms)
    answers = await approvals_of(api, path)
    assert [(a["details"]["answered_by"], a["details"]["answered_in"]) for a in answers] == [
        ("ada", "tab"),
        ("ada", "tab"),
    ]


async def test_by_default_a_2026_client_is_not_asked_to_approve_but_waits_for_a_tab(
    loop_mcp_url: str, jp_auth_header: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """No "input required" approval form either: the held call waits for the tab's answer."""
    path = write_notebook("modern.ipynb", "print('modern', 6 * 7)")
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        modern_client(loop_mcp_url, dict(jp_auth_header), host_says_yes(forms)) as client,
    ):
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        arguments = {"path": path, "cell_ids": ["c0"]}
        running = asyncio.ensure_future(client.call_tool("run_cells", arguments))
        card = await waits_for_a_person(running, board)
        await answer_approval(api, path, card, "once")
        result = await running
    assert "modern 42" in text_of(result), text_of(result)
    assert not approval_forms(forms)
    [answer] = await approvals_of(api, path)
    assert answer["details"]["answered_in"] == "tab"


async def test_by_default_a_cells_input_is_still_asked_in_the_client(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("name.ipynb", ASKS_NAME)
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        loop_mcp_session(elicitation=host_says_yes(forms)) as session,
    ):
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
        card = await waits_for_a_person(running, board)
        await answer_approval(api, path, card, "once")
        result = await running
        await wait_for(lambda: "hello Ada" in tab.text("c0"))
    assert "hello Ada" in text_of(result), text_of(result)
    [form] = forms  # the prompt's, not an approval's
    assert "Your name? " in form.message and not approval_forms(forms)


@pytest.mark.parametrize("loop_config", [OPTED_IN])
async def test_opted_in_the_clients_answer_approves_and_the_journal_says_where(
    loop_config: dict[str, Any], loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("opted.ipynb", "print('opted', 6 * 7)", "print('again')")
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        loop_mcp_session(name="claude-code", elicitation=host_says_yes(forms)) as session,
    ):
        first = await call(session, "run_cells", path=path, cell_ids=["c0"])
        second = await call(session, "run_cells", path=path, cell_ids=["c1"])  # "turn" holds
        await wait_for(lambda: "again" in tab.text("c1"))
    assert "opted 42" in text_of(first) and "again" in text_of(second), text_of(second)
    assert len(approval_forms(forms)) == 1
    [answer] = await approvals_of(api, path)
    details = answer["details"]
    assert (details["answered_by"], details["answered_in"]) == (
        "ada, in the MCP client",
        "mcp_client",
    )


async def test_jupyter_loop_approve_answers_an_agents_run_and_is_journalled_as_the_terminal(
    loop_mcp_session: Any,
    write_notebook: Any,
    open_tab: Any,
    api: Any,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: Any,
) -> None:
    path = write_notebook("term.ipynb", "print('from the terminal', 6 * 7)")
    token = jp_auth_header["Authorization"].split()[1]
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}"
    async with open_tab(path) as tab, loop_mcp_session(elicitation=host_says_yes([])) as session:
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
        card = await waits_for_a_person(running, board)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "jupyter_loop.cli", "--url", url, "--token", token,
            "approve", path, card["id"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 0, err.decode()
        result = await running
    assert "from the terminal 42" in text_of(result), text_of(result)
    [answer] = await approvals_of(api, path)
    assert answer["details"]["answered_in"] == "terminal"


async def test_a_rest_answer_cannot_claim_to_come_from_the_mcp_client(
    write_notebook: Any, api: Any
) -> None:
    write_notebook("claim.ipynb", "print(1)")
    body = {"path": "claim.ipynb", "decision": "once", "answered_in": "mcp_client"}
    route = ("api", "jupyter-loop", "agent", "approvals", "a-none")
    with pytest.raises(Exception, match="400"):
        await api(*route, method="POST", body=body)
