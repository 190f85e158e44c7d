"""Approvals asked in the agent's own MCP client (the spec's elicitation) as well as in the
tabs: the first answer wins; a client that cannot show a form keeps waiting for a tab.
Driven by the MCP SDK's own client against a real server and kernel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from authorizers import both
from loop_helpers import wait_for
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import ASKS_NAME, answer_approval, approvals_of, call, text_of
from mcp_types.version import LATEST_MODERN_VERSION
from pycrdt import Map

CANARY = "canary-5e1d8b3a92c4f706"
AGENT = 'an MCP client of ada, calling itself "claude-code"'


@pytest.fixture
def loop_config() -> dict[str, Any]:
    # Clients may answer approvals here (off by default: test_mcp_client_approvals.py).
    return {"secrets": [CANARY], "external_approval_timeout": 60.0, "mcp_client_approvals": True}


def answering(action: str, decision: str | None, forms: list[Any]) -> Any:
    """A client's form callback that answers every form at once, keeping what it showed."""

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        forms.append(params)
        content = {"decision": decision} if decision else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


def slow_person(shown: asyncio.Event, release: asyncio.Event) -> Any:
    """A form callback whose person looks away (a tab answers meanwhile), then says no."""

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        shown.set()
        await release.wait()
        return types.ElicitResult(action="decline")

    return answer


async def test_the_agents_person_approves_in_their_client(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("ask.ipynb", f"token = '{CANARY}'\nprint('ran', 6 * 7)")
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        loop_mcp_session(
            name="claude-code", elicitation=answering("accept", "once", forms)
        ) as session,
    ):
        result = await call(session, "run_cells", path=path, cell_ids=["c0"])
        await wait_for(lambda: "ran 42" in tab.text("c0"))
        assert "approval" not in tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
    assert not result.is_error and "ran 42" in text_of(result), text_of(result)
    [form] = forms
    assert form.message.startswith(f"{AGENT} asks to run 1 cell")
    assert "print('ran', 6 * 7)" in form.message and CANARY not in form.message  # masked
    choices = form.requested_schema["properties"]["decision"]["oneOf"]
    assert [c["const"] for c in choices] == ["once", "turn", "deny"]
    [approval] = await approvals_of(api, path)
    assert approval["by"] == AGENT
    assert approval["details"]["answered_by"] == "ada, in the MCP client"
    assert approval["details"]["answered_in"] == "mcp_client"
    assert approval["details"]["decision"] == "once"


async def test_declining_the_form_denies_the_run(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("no.ipynb", "print('should not run')")
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        loop_mcp_session(elicitation=answering("decline", None, forms)) as session,
    ):
        result = await call(session, "run_cells", path=path, cell_ids=["c0"])
        assert tab.cell("c0").get("execution_count") is None
    assert "Not run: ada, in the MCP client denied running c0." in text_of(result)
    assert len(forms) == 1


async def test_a_dismissed_form_leaves_the_answer_to_a_tab(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("later.ipynb", "print('ran after all')")
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        loop_mcp_session(elicitation=answering("cancel", None, forms)) as session,
    ):
        running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        approval = await wait_for(lambda: board.get("approval"))
        await wait_for(lambda: forms)
        await asyncio.sleep(0.5)  # the dismissal has reached the server: still waiting
        assert not running.done()
        await answer_approval(api, path, approval, "once")
        result = await running
    assert "ran after all" in text_of(result)
    [answered] = await approvals_of(api, path)
    assert (answered["details"]["answered_by"], answered["details"]["answered_in"]) == (
        "ada",
        "tab",
    )


async def test_a_tab_answering_first_wins_and_the_form_is_withdrawn(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("race.ipynb", "print('the tab said yes')")
    shown, release = asyncio.Event(), asyncio.Event()
    async with (
        open_tab(path) as tab,
        loop_mcp_session(elicitation=slow_person(shown, release)) as session,
    ):
        running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        approval = await wait_for(lambda: board.get("approval"))
        await asyncio.wait_for(shown.wait(), 30)
        await answer_approval(api, path, approval, "once")
        result = await running
        release.set()  # the late "no" changes nothing
        await asyncio.sleep(0.5)
        assert "the tab said yes" in tab.text("c0")
    assert "the tab said yes" in text_of(result)
    assert [a["details"]["decision"] for a in await approvals_of(api, path)] == ["once"]


@pytest.mark.parametrize("client", ["on the handshake protocol", "on the 2026 protocol"])
async def test_a_client_that_cannot_be_asked_waits_for_a_tab(
    client: str, loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """The SDK client says it can show forms only when given a callback: without one, on
    either protocol, only the tabs are asked."""
    path = write_notebook("plain.ipynb", "print('plain')")
    forms: list[Any] = []
    modern = client == "on the 2026 protocol"
    async with open_tab(path) as tab, loop_mcp_session(modern=modern) as session:
        running = asyncio.ensure_future(call(session, "run_cells", path=path, cell_ids=["c0"]))
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        approval = await wait_for(lambda: board.get("approval"))
        await asyncio.sleep(0.5)
        assert not running.done()
        await answer_approval(api, path, approval, "deny")
        result = await running
    assert "Not run: ada denied running c0." in text_of(result) and not forms


@pytest.mark.parametrize("authorizer", both("BobNoKernels"))  # ada may do everything
async def test_either_kind_of_authorizer_lets_a_person_with_the_right_answer_in_the_client(
    authorizer: str, loop_mcp_session: Any, write_notebook: Any, open_tab: Any
) -> None:
    path = write_notebook("allowed.ipynb", "print('allowed', 6 * 7)")
    forms: list[Any] = []
    async with (
        open_tab(path),
        loop_mcp_session(elicitation=answering("accept", "once", forms)) as s,
    ):
        result = await call(s, "run_cells", path=path, cell_ids=["c0"])
    assert "allowed 42" in text_of(result) and len(forms) == 1


@pytest.mark.parametrize("authorizer", both("NoKernels"))
async def test_a_caller_without_the_right_to_run_is_never_asked_in_the_client(
    authorizer: str, loop_mcp_session: Any, write_notebook: Any, open_tab: Any
) -> None:
    """An ``async def is_authorized`` whose answer went unawaited would be a truthy
    coroutine: the form would be shown and the run allowed."""
    path = write_notebook("refused.ipynb", "print('must not run')")
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        loop_mcp_session(elicitation=answering("accept", "once", forms)) as session,
    ):
        result = await call(session, "run_cells", path=path, cell_ids=["c0"])
        await asyncio.sleep(0.5)
        assert tab.cell("c0").get("execution_count") is None
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        assert "approval" not in board
    assert result.is_error and "kernels:execute" in text_of(result), text_of(result)
    assert not forms


def person(approve: str, typed: str, forms: list[Any]) -> Any:
    """A person at the client who allows the run and types ``typed`` at its prompt."""

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        forms.append(params)
        if "decision" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"decision": approve})
        return types.ElicitResult(action="accept", content={"answer": typed})

    return answer


async def test_a_cells_input_is_asked_in_the_client_during_the_agents_run(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any
) -> None:
    path = write_notebook("name.ipynb", ASKS_NAME)
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        loop_mcp_session(elicitation=person("once", "Ada", forms)) as s,
    ):
        result = await call(s, "run_cells", path=path, cell_ids=["c0"])
        # The call's answer first: when the tab does not show the line, it says why.
        assert "hello Ada" in text_of(result), text_of(result)
        await wait_for(lambda: "hello Ada" in tab.text("c0"))
        outputs = tab.cell("c0")["outputs"]
        assert (outputs[0]["name"], outputs[0]["text"]) == ("stdin", "Your name?  Ada\n")
    assert "Your name? " in forms[1].message and "c0" in forms[1].message


async def test_a_password_prompt_is_left_to_the_tabs(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("pw.ipynb", "import getpass\nprint(len(getpass.getpass('pw: ')))")
    forms: list[Any] = []
    async with open_tab(path) as tab, loop_mcp_session(elicitation=person("once", "x", forms)) as s:
        running = asyncio.ensure_future(call(s, "run_cells", path=path, cell_ids=["c0"]))
        request = await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        await asyncio.sleep(0.6)  # three polls: the client is not asked
        body = {"path": path, "cell_id": "c0", "request_id": request["request_id"],
                "value": "hunter22"}  # fmt: skip
        await api("api", "jupyter-loop", "input", method="POST", body=body)
        result = await running
    assert "8" in text_of(result) and len(forms) == 1  # the approval only


@asynccontextmanager
async def modern_client(
    loop_mcp_url: str, headers: dict[str, str], form: Any
) -> AsyncIterator[Client]:
    """The SDK's own ``Client`` on the 2026 protocol, showing forms with ``form``: it drives
    the "input required" round trips itself."""
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(
            streamable_http_client(loop_mcp_url, http_client=http),
            mode=LATEST_MODERN_VERSION,
            client_info=types.Implementation(name="claude-code", version="1"),
            elicitation_callback=form,
        ) as client,
    ):
        yield client


async def test_a_2026_client_is_asked_through_input_required_and_its_answer_runs_the_cells(
    loop_mcp_url: str, jp_auth_header: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """No back-channel on the 2026 protocol: the call answers "input required" with the
    form; the client shows it and makes the call again with the answer; that call gives
    the run's result. The tabs were asked too, and the form's answer took it off them."""
    path = write_notebook("mrtr.ipynb", f"token = '{CANARY}'\nprint('ran', 6 * 7)")
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        modern_client(
            loop_mcp_url, dict(jp_auth_header), answering("accept", "once", forms)
        ) as client,
    ):
        result = await client.call_tool("run_cells", {"path": path, "cell_ids": ["c0"]})
        await wait_for(lambda: "ran 42" in tab.text("c0"))
        assert "approval" not in tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
    assert not result.is_error and "ran 42" in text_of(result), text_of(result)
    [form] = forms
    assert form.message.startswith(f"{AGENT} asks to run 1 cell")
    assert "print('ran', 6 * 7)" in form.message and CANARY not in form.message  # masked
    [approval] = await approvals_of(api, path)
    assert approval["details"]["answered_by"] == "ada, in the MCP client"
    assert approval["details"]["decision"] == "once"


async def test_a_2026_clients_no_denies_and_a_tab_answering_first_wins(
    loop_mcp_url: str, jp_auth_header: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("mrtr-no.ipynb", "print('should not run')")
    async with modern_client(
        loop_mcp_url, dict(jp_auth_header), answering("decline", None, [])
    ) as c:
        result = await c.call_tool("run_cells", {"path": path, "cell_ids": ["c0"]})
    assert "Not run" in text_of(result) and "should not run" not in text_of(result)

    path = write_notebook("mrtr-race.ipynb", "print('the tab said yes')")
    shown, release = asyncio.Event(), asyncio.Event()
    async with (
        open_tab(path) as tab,
        modern_client(loop_mcp_url, dict(jp_auth_header), slow_person(shown, release)) as c,
    ):
        running = asyncio.ensure_future(
            c.call_tool("run_cells", {"path": path, "cell_ids": ["c0"]})
        )
        board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
        approval = await wait_for(lambda: board.get("approval"))
        await asyncio.wait_for(shown.wait(), 30)
        await answer_approval(api, path, approval, "once")
        await wait_for(lambda: "the tab said yes" in tab.text("c0"))
        release.set()  # the late "no" comes with the call made again: the run is over
        result = await running
    assert "the tab said yes" in text_of(result)
    decisions = [a["details"]["decision"] for a in await approvals_of(api, path)]
    assert decisions == ["once"]


@pytest.mark.parametrize("authorizer", [*both("BobNoKernels"), *both("NoKernels")])
async def test_a_2026_client_is_asked_only_when_its_caller_may_run_under_either_authorizer(
    authorizer: str, loop_mcp_url: str, jp_auth_header: Any, write_notebook: Any, open_tab: Any
) -> None:
    """The "input required" path comes after the one rights check: ada may run under
    "BobNoKernels" (the form is shown, the cells run), not under "NoKernels" (refused, no
    form), with a plain and an ``async def is_authorized`` alike."""
    path = write_notebook("rights.ipynb", "print('allowed', 6 * 7)")
    forms: list[Any] = []
    headers = dict(jp_auth_header)
    async with (
        open_tab(path) as tab,
        modern_client(loop_mcp_url, headers, answering("accept", "once", forms)) as client,
    ):
        result = await client.call_tool("run_cells", {"path": path, "cell_ids": ["c0"]})
        await asyncio.sleep(0.5)
        ran = tab.cell("c0").get("execution_count") is not None
    if "Bob" in authorizer:
        assert ran and "allowed 42" in text_of(result) and len(forms) == 1
    else:
        assert not ran and result.is_error and "kernels:execute" in text_of(result)
        assert not forms


async def test_a_2026_client_is_asked_a_cells_input_through_input_required(
    loop_mcp_url: str, jp_auth_header: Any, write_notebook: Any, open_tab: Any
) -> None:
    """The run is under way when the cell asks: its call, held between the client's
    requests, answers "input required" with the prompt's form, and the answer made again
    with the call reaches the kernel as a tab's would."""
    path = write_notebook("mrtr-name.ipynb", ASKS_NAME)
    forms: list[Any] = []
    async with (
        open_tab(path) as tab,
        modern_client(loop_mcp_url, dict(jp_auth_header), person("once", "Ada", forms)) as client,
    ):
        result = await client.call_tool("run_cells", {"path": path, "cell_ids": ["c0"]})
        await wait_for(lambda: "hello Ada" in tab.text("c0"))
        outputs = tab.cell("c0")["outputs"]
        assert (outputs[0]["name"], outputs[0]["text"]) == ("stdin", "Your name?  Ada\n")
    assert not result.is_error and "hello Ada" in text_of(result), text_of(result)
    assert len(forms) == 2 and "Your name? " in forms[1].message and "c0" in forms[1].message
