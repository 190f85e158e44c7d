"""Long runs as MCP tasks (the ``io.modelcontextprotocol/tasks`` extension), driven by the
MCP SDK's own client on the 2026 protocol with the extension declared: ``run_cells``
answers a task at once; the client polls it across its own restart until the result; a
cancel interrupts the kernel; nobody else sees the task; a client without the extension
waits on its call as before."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import nbformat
import pytest
from authorizers import both
from kept_helpers import PATH, started
from loop_fixtures import Serve
from loop_helpers import wait_for
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_helpers import ASKS_NAME, answer_approval, approvals_of, text_of
from pycrdt import Map

from jupyter_loop.testing.server_process import TOKEN, ServerProcess
from jupyter_loop.testing.task_client import (
    CLAIMS,
    TASKS,
    CreatedTask,
    TaskState,
    answer_task,
    task_method,
)

WAITS_FOR_GO = (
    "import pathlib, time\n"
    "while not pathlib.Path('go').exists():\n"
    "    time.sleep(0.05)\n"
    "print('done', 6 * 7)"
)


@pytest.fixture
def loop_config() -> dict[str, Any]:
    """A task may put its approval to the client (off by default, see
    test_mcp_client_approvals.py)."""
    return {"mcp_client_approvals": True}


def tasks_client(loop_mcp_session: Any, **kwargs: Any) -> Any:
    return loop_mcp_session(
        name="claude-code", modern=True, extensions={TASKS: {}}, result_claims=CLAIMS, **kwargs
    )


async def start_task(session: Any, path: str) -> CreatedTask:
    created = await session.call_tool(
        "run_cells", {"path": path, "cell_ids": ["c0"]}, allow_claimed=True
    )
    assert isinstance(created, CreatedTask), created
    return created


async def approve(api: Any, tab: Any, path: str) -> None:
    board = tab.notebook.ydoc.get("jupyter_loop:agent", type=Map)
    approval = await wait_for(lambda: board.get("approval"))
    await answer_approval(api, path, approval, "once")


async def finished(session: Any, task_id: str) -> TaskState:
    async def polled() -> TaskState | None:
        state: TaskState = await task_method(session, "tasks/get", task_id)
        return state if state.status != "working" else None

    for _ in range(600):
        if (state := await polled()) is not None:
            return state
        await asyncio.sleep(0.1)
    raise AssertionError("the task never ended")


async def test_a_run_is_a_task_polled_across_the_clients_restart(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any, jp_root_dir: Path
) -> None:
    path = write_notebook("long.ipynb", WAITS_FOR_GO)
    async with open_tab(path) as tab:
        async with tasks_client(loop_mcp_session) as first:
            capabilities = first.server_capabilities
            assert capabilities is not None and TASKS in (capabilities.extensions or {})
            # The task comes at once: nobody has approved the run yet.
            created = await asyncio.wait_for(start_task(first, path), timeout=10)
            assert created.status == "working" and created.result_type == "task"
            await approve(api, tab, path)
            await asyncio.sleep(1)  # the cell runs, waiting for its file
            state = await task_method(first, "tasks/get", created.task_id)
            assert state.status == "working"
        # Another connection (the client restarted) polls the same task.
        async with tasks_client(loop_mcp_session) as again:
            assert (await task_method(again, "tasks/get", created.task_id)).status == "working"
            (jp_root_dir / "go").touch()
            done = await finished(again, created.task_id)
        assert done.status == "completed", done
        result = types.CallToolResult.model_validate(done.result)
        assert not result.is_error and "done 42" in text_of(result), text_of(result)
        assert "done 42" in tab.text("c0")


async def test_cancelling_a_task_interrupts_its_run(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook(
        "cancel.ipynb", "import time\nprint('started', flush=True)\ntime.sleep(600)"
    )
    async with open_tab(path) as tab, tasks_client(loop_mcp_session) as session:
        created = await start_task(session, path)
        await approve(api, tab, path)
        await wait_for(lambda: "started" in tab.text("c0"), timeout=30)
        await task_method(session, "tasks/cancel", created.task_id)
        assert (await task_method(session, "tasks/get", created.task_id)).status == "cancelled"
        outputs = lambda: tab.cell("c0")["outputs"]  # noqa: E731
        await wait_for(lambda: outputs()[-1].get("ename") == "KeyboardInterrupt", timeout=30)


async def test_run_all_runs_every_code_cell_as_one_task_and_the_history_says_so(
    loop_mcp_session: Any, jp_root_dir: Path, open_tab: Any, api: Any
) -> None:
    """``run_all``: every code cell, top to bottom, as a Run All of JupyterLab's; a task for
    a client that speaks the extension, the cells' outputs its result."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("print('first', 1)", id="c0"),
        nbformat.v4.new_markdown_cell("# not code", id="m1"),
        nbformat.v4.new_code_cell("print('second', 2)", id="c2"),
    ]
    nbformat.write(notebook, jp_root_dir / "all.ipynb")
    path = "all.ipynb"
    async with open_tab(path) as tab, tasks_client(loop_mcp_session) as session:
        created = await session.call_tool("run_all", {"path": path}, allow_claimed=True)
        assert isinstance(created, CreatedTask), created
        await approve(api, tab, path)
        done = await finished(session, created.task_id)
        result = types.CallToolResult.model_validate(done.result)
        assert not result.is_error and "first 1" in text_of(result), text_of(result)
        assert "second 2" in text_of(result)
        assert "first 1" in tab.text("c0") and "second 2" in tab.text("c2")
    history = await api("api", "jupyter-loop", "history", params={"path": path})
    ran = {run["cell_id"]: run for run in history["runs"]}
    assert set(ran) == {"c0", "c2"}
    assert all(run["run_all"] and run["channel"] == "mcp" for run in ran.values()), ran
    assert ran["c2"]["by"].endswith(", Run All"), ran["c2"]["by"]


async def never_called(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("a task's questions come in the task, not on a back-channel")


async def asked(session: Any, task_id: str, kind: str) -> tuple[str, str]:
    """Poll the task until it asks a question of ``kind``: the key and the form's text.
    (Up to 90 s: after a restart the question waits for a kernel start, which took over
    30 s at a load of 10 on the 2-core machine.)"""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        state: TaskState = await task_method(session, "tasks/get", task_id)
        if state.status == "input_required":
            [(key, request)] = (state.input_requests or {}).items()
            if key.startswith(kind):
                assert request["method"] == "elicitation/create"
                return key, request["params"]["message"]
        await asyncio.sleep(0.1)
    raise AssertionError(f"the task never asked for {kind}")


@pytest.mark.parametrize("authorizer", both("BobNoKernels"))  # ada may run
async def test_a_tasks_approval_and_input_are_asked_through_the_task(
    authorizer: str, loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """A client that shows forms: its task says ``input_required`` with the approval's
    form, then the cell's ``input()`` prompt's, and ``tasks/update`` (which needs the
    right to run) answers each; under a plain and an async authorizer."""
    path = write_notebook("asked.ipynb", ASKS_NAME)
    async with (
        open_tab(path) as tab,
        tasks_client(loop_mcp_session, elicitation=never_called) as session,
    ):
        created = await start_task(session, path)
        key, message = await asked(session, created.task_id, "approval")
        assert "asks to run 1 cell" in message and "input('Your name? ')" in message
        approval = {"action": "accept", "content": {"decision": "once"}}
        await answer_task(session, created.task_id, {key: approval})
        key, message = await asked(session, created.task_id, "input")
        assert "Your name? " in message and "c0" in message
        await answer_task(
            session, created.task_id, {key: {"action": "accept", "content": {"answer": "Ada"}}}
        )
        done = await finished(session, created.task_id)
        assert "hello Ada" in tab.text("c0")
    result = types.CallToolResult.model_validate(done.result)
    assert not result.is_error and "hello Ada" in text_of(result), text_of(result)
    [entry] = await approvals_of(api, path)
    assert entry["details"]["answered_by"].endswith(", in the MCP client")


async def test_a_tab_answering_first_takes_the_question_off_the_task(
    loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    path = write_notebook("tab-first.ipynb", "print('the tab said yes')")
    async with (
        open_tab(path) as tab,
        tasks_client(loop_mcp_session, elicitation=never_called) as session,
    ):
        created = await start_task(session, path)
        key, _ = await asked(session, created.task_id, "approval")
        await approve(api, tab, path)
        done = await finished(session, created.task_id)
        assert done.status == "completed" and not done.input_requests
        # The late answer is to a question no longer asked: ignored.
        await answer_task(session, created.task_id, {key: {"action": "decline"}})
    assert "the tab said yes" in text_of(types.CallToolResult.model_validate(done.result))
    decisions = [a["details"]["decision"] for a in await approvals_of(api, path)]
    assert decisions == ["once"]


@pytest.mark.parametrize("authorizer", both("BobNoKernels"))  # ada may run
async def test_a_task_is_seen_by_its_maker_only(
    authorizer: str, loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """Under a plain and an async authorizer: a token ada made (another principal, with
    the right to run this notebook) cannot see, cancel or answer her task."""
    path = write_notebook("mine.ipynb", "print('mine')")
    body = {"scope": "run", "notebook": path}
    made = await api("api", "jupyter-loop", "tokens", method="POST", body=body)
    headers = {"Authorization": f"Bearer {made['token']}"}
    async with open_tab(path) as tab, tasks_client(loop_mcp_session) as ada:
        created = await start_task(ada, path)
        async with tasks_client(loop_mcp_session, headers=headers) as other:
            for method in ("tasks/get", "tasks/cancel", "tasks/update"):
                with pytest.raises(MCPError, match="No such task"):
                    await task_method(other, method, created.task_id)
        await approve(api, tab, path)
        assert (await finished(ada, created.task_id)).status == "completed"


@pytest.mark.parametrize("client", ["without the extension", "on the handshake protocol"])
async def test_a_client_without_tasks_waits_on_its_call(
    client: str, loop_mcp_session: Any, write_notebook: Any, open_tab: Any, api: Any
) -> None:
    """A 2026 client that does not declare the extension, and a handshake-protocol client
    that does (that wire has no task shape), get the call's own result."""
    path = write_notebook("plain.ipynb", "print('plain', 6 * 7)")
    handshake = client == "on the handshake protocol"
    declared = {"extensions": {TASKS: {}}, "result_claims": CLAIMS} if handshake else {}
    connect = loop_mcp_session(name="claude-code", modern=not handshake, **declared)
    async with open_tab(path) as tab, connect as session:
        answer = asyncio.ensure_future(
            session.call_tool("run_cells", {"path": path, "cell_ids": ["c0"]})
        )
        await approve(api, tab, path)
        result = await answer
        assert isinstance(result, types.CallToolResult) and "plain 42" in text_of(result)


@asynccontextmanager
async def tasks_client_of(
    server: ServerProcess, elicitation: Any = None
) -> AsyncIterator[ClientSession]:
    """An SDK client of a server process, on the 2026 protocol, speaking tasks (and
    showing forms, given ``elicitation``)."""
    headers = {"Authorization": f"token {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(server.url("api", "jupyter-loop", "mcp"), http_client=http) as (
            read,
            write,
        ),
        ClientSession(
            read,
            write,
            extensions={TASKS: {}},
            result_claims=CLAIMS,
            elicitation_callback=elicitation,
        ) as session,
    ):
        await session.discover()
        yield session


async def task_killed_under(loop_serve: Serve, then: str = "") -> tuple[ServerProcess, str]:
    """A server whose task's cell waits for ``go`` (then runs ``then``) on a kept kernel,
    killed once the cell started and started again; the task's id."""
    server = loop_serve("--JupyterLoopApp.approval_policy=always")
    source = "import pathlib\npathlib.Path('started').touch()\n" + WAITS_FOR_GO + then
    await started(server, source)
    async with tasks_client_of(server) as before:
        created = await start_task(before, PATH)
        await wait_for(lambda: (server.root / "started").exists(), timeout=60)
        server.crash()  # the server alone: its kernel is kept
    server.start()
    await server.ready()
    return server, created.task_id


@pytest.mark.timeout(180)
async def test_a_task_outlives_a_server_killed_under_it(loop_serve: Serve) -> None:
    """The task is its record on disk; its run goes on on the kept kernel, and the
    restarted server answers for the task until the run ends, then gives its result."""
    server, task_id = await task_killed_under(loop_serve)
    async with tasks_client_of(server) as after:
        assert (await task_method(after, "tasks/get", task_id)).status == "working"
        (server.root / "go").touch()
        done = await finished(after, task_id)
    assert done.status == "completed", done
    result = types.CallToolResult.model_validate(done.result)
    assert "server restarted" in text_of(result) and "done 42" in text_of(result)


@pytest.mark.timeout(180)
async def test_a_restarted_servers_task_asks_its_cells_input_through_the_task(
    loop_serve: Serve,
) -> None:
    """The run goes on on the kept kernel after the server's restart, and its cell's
    ``input()`` comes then: the task asks it of a client that shows forms, as the server
    that made the task would have (the question lived with that server's call, so it was
    asked in the tabs only)."""
    server, task_id = await task_killed_under(loop_serve, then="\n" + ASKS_NAME)
    async with tasks_client_of(server, elicitation=never_called) as after:
        assert (await task_method(after, "tasks/get", task_id)).status == "working"
        (server.root / "go").touch()
        key, message = await asked(after, task_id, "input")
        assert "Your name? " in message and "c0" in message
        answer = {"action": "accept", "content": {"answer": "Ada"}}
        await answer_task(after, task_id, {key: answer})
        done = await finished(after, task_id)
    assert done.status == "completed", done
    result = types.CallToolResult.model_validate(done.result)
    assert "done 42" in text_of(result) and "hello Ada" in text_of(result), text_of(result)
