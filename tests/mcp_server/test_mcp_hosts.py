"""The MCP host matrix (issue 43 §6) on the test server: the official Python SDK on both
protocols; openai-agents', fastmcp's and pydantic-ai's (an agent's loop on the scripted
model server) when installed (the ``test`` extra has them); and the TypeScript SDK 1.x and
the 2.x client (with ext-tasks) when ``jlpm install`` has put them in ``node_modules``.
Each column is a host's first use: connect,
list, read a cell's text and image, read a resource, run, run as a task in its protocol's
shape (the TypeScript SDK 1.x: SEP-1686 on 2025-11-25), propose, a scope refusal, and
the server's own words for a call without a token."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import nbformat
import pytest
from loop_helpers import wait_for

from jupyter_loop.testing.host_frameworks import pydantic_ai
from jupyter_loop.testing.host_libraries import fastmcp, openai_agents
from jupyter_loop.testing.host_matrix import (
    COLUMNS,
    PATH,
    TS_SCRIPT,
    Row,
    node_libraries,
    prepare,
    python_sdk,
    table,
    typescript,
)


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"approval_policy": "always"}


@pytest.fixture
def target(loop_mcp_url: str, jp_auth_header: Any, jp_root_dir: Path) -> Any:
    """``await target()``: the notebook written, a propose-only token made."""
    token = jp_auth_header["Authorization"].split()[-1]
    return lambda: prepare(jp_root_dir, loop_mcp_url.removesuffix("api/jupyter-loop/mcp"), token)


def failed(row: Row, allowed: frozenset[str] = frozenset()) -> dict[str, str]:
    print(table([row]))
    return {
        name: row.cells[name].detail
        for name in COLUMNS
        if name not in allowed and (name not in row.cells or row.cells[name].ok is False)
    }


@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_the_python_sdk_column_by_column(target: Any, modern: bool) -> None:
    row = await python_sdk(await target(), modern)
    assert failed(row) == {}
    assert (row.cells["task"].ok is None) is not modern  # no 2025-11-25 tasks in its client


@pytest.mark.parametrize("library", [openai_agents, fastmcp, pydantic_ai], ids=lambda f: f.__name__)
async def test_an_agent_frameworks_mcp_adapter_column_by_column(target: Any, library: Any) -> None:
    """openai-agents' ``MCPServerStreamableHttp``, fastmcp's ``Client`` and pydantic-ai's
    ``MCPToolset`` (its run column: an agent's loop), each through its own objects; the
    scope refusal and the call without a token show the server's own words."""
    row = await library(await target())
    if row is None:
        pytest.skip(f"{library.__name__} is not installed")
    assert failed(row) == {}


@pytest.mark.parametrize("library", ["ts1", "ts2"])
async def test_the_typescript_clients_column_by_column(target: Any, library: str) -> None:
    """The TypeScript SDK 1.x gets a task for run_cells and its result (2025-11-25); the
    2.x client too, through ext-tasks."""
    if library not in node_libraries():
        pytest.skip(f"{library}: node or its packages are not installed (jlpm install)")
    row = await typescript(await target(), library)
    assert failed(row) == {}


async def test_a_typescript_sdk_1_task_is_cancelled_with_its_run(
    target: Any, jp_root_dir: Path, read_notebook: Any
) -> None:
    """2025-11-25 ``tasks/cancel`` answers the cancelled task and interrupts the run;
    cancelling it again is refused, as that protocol asks."""
    if "ts1" not in node_libraries():
        pytest.skip("ts1: node or its packages are not installed (jlpm install)")
    made = await target()
    long = nbformat.v4.new_code_cell("import time\nprint('started', flush=True)\ntime.sleep(600)")
    long["id"] = "slow"
    nb = nbformat.read(jp_root_dir / PATH, as_version=4)
    nb.cells.append(long)
    nbformat.write(nb, jp_root_dir / PATH)
    config = {**made.ts_config(), "cancelCell": "slow", "cancelAfterMs": 3000}
    done = await asyncio.to_thread(
        subprocess.run,
        ["node", str(TS_SCRIPT), "ts1", json.dumps(config)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    steps = json.loads(done.stdout.strip().splitlines()[-1])
    assert steps["created"] == "working" and steps["cancelled"] == "cancelled", steps
    assert steps["polled"] == "cancelled", steps
    assert "already ended" in steps["again"], steps

    def interrupted() -> bool:
        cells = {c.get("id"): c for c in read_notebook(PATH).cells}
        return any(o.get("ename") == "KeyboardInterrupt" for o in cells["slow"].get("outputs", []))

    await wait_for(interrupted, timeout=30)


async def test_a_typescript_sdk_1_task_asks_a_cells_input_through_tasks_result(
    target: Any, jp_root_dir: Path
) -> None:
    """A cell's ``input()`` during a 2025-11-25 task: ``tasks/get`` says
    ``input_required``, the client's ``tasks/result`` gets the form (an elicitation on its
    stream) and its answer reaches the cell, whose output is the task's result."""
    if "ts1" not in node_libraries():
        pytest.skip("ts1: node or its packages are not installed (jlpm install)")
    made = await target()
    asking = nbformat.v4.new_code_cell("print('got', input('Your name?'))")
    asking["id"] = "asks"
    nb = nbformat.read(jp_root_dir / PATH, as_version=4)
    nb.cells.append(asking)
    nbformat.write(nb, jp_root_dir / PATH)
    config = {**made.ts_config(), "inputCell": "asks", "inputAnswer": "Ada"}
    done = await asyncio.to_thread(
        subprocess.run,
        ["node", str(TS_SCRIPT), "ts1", json.dumps(config)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    steps = json.loads(done.stdout.strip().splitlines()[-1])
    assert "input_required" in steps["statuses"], steps
    assert len(steps["forms"]) == 1 and "Your name?" in steps["forms"][0], steps
    assert "got Ada" in steps.get("result", ""), steps
