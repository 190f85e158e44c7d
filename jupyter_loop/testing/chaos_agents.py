"""Chaos events through the outside-agent channel: MCP runs and an accepted proposal.

An outside agent reaches the notebook as a person's tools do not: over the MCP endpoint
(the official SDK's client here), with its runs and proposals going through the same
services as a tab's. The chaos server lets agents run cells without asking (approval
policy ``always``): who approves is the approvals tests' business, what a run writes is
this suite's.

A proposal is accepted through the REST API while another tab types in another cell of the
notebook. Typing in the proposal's own cell makes the proposal stale (the server refuses
it, 409, and nothing changes): that is a refusal, not a conflict to score.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from tornado.httpclient import HTTPClientError

from .chaos_world import World, cell_code
from .server_process import TOKEN, ServerProcess

PROPOSAL_ID = re.compile(r"Proposal (\S+) \(")


@asynccontextmanager
async def mcp_client(
    server: ServerProcess, name: str = "chaos-agent"
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session on ``server``'s MCP endpoint, with its token."""
    url = server.url("api", "jupyter-loop", "mcp")
    headers = {"Authorization": f"token {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(
            read, write, client_info=types.Implementation(name=name, version="1")
        ) as session,
    ):
        await session.initialize()
        yield session


def mcp_session(world: World) -> Any:
    """``async with mcp_session(world)``: the trial's server's MCP client session."""
    return mcp_client(world.server)


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def mcp_run(world: World, cell_ids: list[str]) -> None:
    """Run cells as an outside agent does, waiting for them (a restart meanwhile cuts the
    call: only the run's outputs are checked then)."""
    try:
        async with mcp_session(world) as session:
            arguments = {"path": world.path, "cell_ids": cell_ids, "wait_seconds": 60}
            result = await session.call_tool("run_cells", arguments)
    except Exception as e:
        if not world.restarting:
            world.errors.append(f"MCP run {cell_ids} failed: {e!r}")
        return
    if result.is_error and not world.restarting:
        world.errors.append(f"MCP run {cell_ids} was refused: {_text(result)[:300]}")
        return
    await world.wait_runs_over()


async def accept_proposal(world: World, rng: random.Random) -> str:
    """An agent proposes new code for a cell over MCP; it is accepted through the REST API
    while a tab types in another cell."""
    await world.settle_typed()  # the proposal is made against the cell as typed
    cell = rng.choice(world.expected.cells)
    tag = f"{cell.cell_id}-p{len(cell.tags)}"
    async with mcp_session(world) as session:
        result = await session.call_tool(
            "propose_modify",
            {"path": world.path, "cell_id": cell.cell_id, "source": cell_code(tag), "summary": tag},
        )
    found = PROPOSAL_ID.search(_text(result))
    if result.is_error or found is None:
        world.errors.append(f"proposal for {cell.cell_id} not made: {_text(result)[:300]}")
        return f"proposal for {cell.cell_id} not made"
    others = [c for c in world.expected.cells if c is not cell]
    typist = rng.choice(world.online_tabs()) if world.online_tabs() else None
    typing = ""
    if typist is not None and others:
        other = rng.choice(others)
        typing = f" while tab {typist.name} types in {other.cell_id}"

        async def type_on() -> None:
            for _ in range(rng.randint(1, 3)):
                other.type(typist.name, typist.type_line(other.cell_id))
                await asyncio.sleep(rng.choice((0, 0.01, 0.05)))

        typed = asyncio.ensure_future(type_on())
    else:
        typed = None
    try:
        await world.server.api(
            "api", "jupyter-loop", "agent", "proposals", found.group(1), "accept",
            method="POST", body={"path": world.path},
        )  # fmt: skip
    except HTTPClientError as e:
        if e.code != 409:
            world.errors.append(f"accepting the proposal for {cell.cell_id}: HTTP {e.code}")
        return f"proposal for {cell.cell_id} refused ({e.code}){typing}"
    finally:
        if typed is not None:
            await typed
    cell.tag = tag
    cell.tags.append(tag)
    cell.code = cell_code(tag)
    cell.typed = {}  # the accepted source replaces the lines typed before it
    return f"proposal for {cell.cell_id} accepted{typing}"
