"""Helpers for the agent tests: REST calls, what a tab sees of the agent, recorded prompts.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import psutil
from loop_fixtures import TEST_API_KEY
from loop_helpers import wait_for
from pycrdt import Array, Map

from jupyter_loop.agent.proposals import PROPOSALS_MAP
from jupyter_loop.agent.shared_turn import AGENT_MAP
from jupyter_loop.testing import ScriptedModelServer, call_tools, say
from jupyter_loop.testing.server_process import ServerProcess

OPENAI_CHAT = "/v1/chat/completions"
OLLAMA_CHAT = "/api/chat"
AGENT = ("api", "jupyter-loop", "agent")
ENDED = ("done", "stopped", "error")


async def refused(call: Any, code: int) -> str:
    """Await a REST call that must fail with ``code``; returns the message it gave."""
    from tornado.httpclient import HTTPClientError

    try:
        await call
    except HTTPClientError as e:
        if e.code != code:
            body = e.response.body if e.response else b""
            raise AssertionError(f"HTTP {e.code}, not {code}: {body!r}") from None
        message = str(json.loads(e.response.body)["message"]) if e.response else ""
        if not message:
            raise AssertionError(f"HTTP {code} without a message") from None
        return message
    raise AssertionError(f"the call succeeded; expected HTTP {code}")


def openai_config(server: ScriptedModelServer, **extra: Any) -> dict[str, Any]:
    """``c.JupyterLoopApp`` settings pointing the agent at the scripted server."""
    return {
        "agent_provider": "openai",
        "openai_base_url": server.openai_base_url,
        "openai_api_key": TEST_API_KEY,
        "agent_model": "scripted-tools",
        "agent_request_timeout": 5.0,
        "batch_interval": 0.01,
        **extra,
    }


class Agent:
    """The agent's REST API, as the panel calls it."""

    def __init__(self, api: Any) -> None:
        self.api = api

    async def start(self, path: str, message: str, **extra: Any) -> str:
        body = {"path": path, "message": message, **extra}
        reply = await self.api(*AGENT, "turns", method="POST", body=body)
        return str(reply["turn_id"])

    async def conversation(self, path: str) -> dict[str, Any]:
        return await self.api(*AGENT, "conversation", params={"path": path})

    async def journal(self, path: str) -> list[dict[str, Any]]:
        return (await self.api(*AGENT, "journal", params={"path": path}))["entries"]

    async def accept(self, path: str, proposal_id: str, **extra: Any) -> Any:
        body = {"path": path, **extra}
        return await self.api(*AGENT, "proposals", proposal_id, "accept", method="POST", body=body)

    async def reject(self, path: str, proposal_id: str) -> Any:
        body = {"path": path}
        return await self.api(*AGENT, "proposals", proposal_id, "reject", method="POST", body=body)

    async def approve(self, path: str, approval_id: str, decision: str = "once") -> Any:
        body = {"path": path, "decision": decision}
        return await self.api(*AGENT, "approvals", approval_id, method="POST", body=body)

    async def stop(self, path: str, turn_id: str) -> Any:
        return await self.api(*AGENT, "turns", turn_id, "stop", method="POST", body={"path": path})

    async def ended(self, path: str, timeout: float = 30.0) -> dict[str, Any]:
        """Wait until the notebook's turn has ended; returns the conversation."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            conversation = await self.conversation(path)
            if (conversation.get("turn") or {}).get("state") in ENDED:
                return conversation
            if loop.time() > deadline:
                raise AssertionError(f"The turn did not end: {conversation.get('turn')}")
            await asyncio.sleep(0.05)


async def approve_each(agent: Agent, path: str, tab: Any, limit: float = 200) -> list[Any]:
    """Answer each approval card the agent's turn shows ("once"), until the turn ends; the
    cards, in order (a real agent's permission requests, our endpoint's approvals)."""
    asked: list[Any] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while loop.time() < deadline:
        state = agent_state(tab)
        if (state.get("turn") or {}).get("state") in ENDED:
            break
        approval = state.get("approval")
        if approval and approval["id"] not in [a["id"] for a in asked]:
            asked.append(approval)
            await agent.approve(path, approval["id"], "once")
        await asyncio.sleep(0.1)
    return asked


def agent_state(tab: Any) -> dict[str, Any]:
    """The agent map as a tab sees it (``live`` entries as plain dicts)."""
    board = tab.notebook.ydoc.get(AGENT_MAP, type=Map)
    value = board.to_py() or {}
    live = board.get("live")
    value["live"] = [entry.to_py() for entry in live] if isinstance(live, Array) else []
    return value


def tab_proposals(tab: Any) -> dict[str, dict[str, Any]]:
    return tab.notebook.ydoc.get(PROPOSALS_MAP, type=Map).to_py() or {}


async def proposal_in(tab: Any) -> dict[str, Any]:
    """Wait for a pending proposal in the tab; return it."""
    found = await wait_for(
        lambda: [p for p in tab_proposals(tab).values() if p.get("status") == "pending"]
    )
    return found[0]


async def approval_in(tab: Any) -> dict[str, Any]:
    return await wait_for(lambda: agent_state(tab).get("approval"))


def notices(conversation: dict[str, Any]) -> list[str]:
    return [m["text"] for m in conversation["messages"] if m["role"] == "notice"]


async def second_turn_after_the_agent_process_ended(
    api: Any, path: str, model: ScriptedModelServer, jp_serverapp: Any, agent_name: str
) -> dict[str, Any]:
    """Two turns of an ACP agent on one notebook, its process ended between them (idle,
    as a server restart ends it): the conversation after the second, which asks the first
    turn's word back (apples). What an agent that reloads its session shows is the test's."""
    agent = Agent(api)
    model.script(say("I will remember apples."), say("You said apples."))
    await agent.start(path, "Remember the word apples.", agent=agent_name)
    assert (await agent.ended(path, timeout=120))["turn"]["state"] == "done"
    service = jp_serverapp.web_app.settings["jupyter_loop_acp"]
    await wait_for(lambda: service.processes() == [], timeout=30)
    await agent.start(path, "Which word?", agent=agent_name)
    conversation = await agent.ended(path, timeout=120)
    assert conversation["turn"]["state"] == "done", conversation["turn"]
    return conversation


def prompt_text(body: dict[str, Any]) -> str:
    """Everything a chat request sent to the model, as one text."""
    return json.dumps(body.get("messages", []), ensure_ascii=False)


def api_of(server: ServerProcess) -> Any:
    """``ServerProcess.api`` with the query parameters the ``Agent`` helper passes."""

    async def call(*parts: str, params: dict[str, str] | None = None, **kwargs: Any) -> Any:
        if params:
            parts = (*parts[:-1], f"{parts[-1]}?{urlencode(params)}")
        return await server.api(*parts, **kwargs)

    return call


@dataclass(frozen=True)
class ErrorAsked:
    """What a real ACP agent did when asked about a cell's error (:func:`asked_about_an_error`)."""

    path: str
    conversation: dict[str, Any]
    asked: list[dict[str, Any]]  # the approval cards answered, in order
    proposals: list[dict[str, Any]]
    live: list[dict[str, Any]]  # the turn's entries, as a tab shows them
    source: str  # the cell's source in the tab, after the turn


async def asked_about_an_error(
    agent: Agent,
    agent_name: str,
    tools: str,
    loop_model_server: ScriptedModelServer,
    notebook_in_tab: Any,
    run_cells: Any,
) -> ErrorAsked:
    """A cell failing with ZeroDivisionError, a real ACP agent asked why, its model scripted
    to read the cell and propose ``1 / 1`` through our MCP tools (named ``tools`` + the tool,
    as that agent names them); every approval card answered once."""
    async with notebook_in_tab("real.ipynb", "1 / 0") as (path, tab):
        await run_cells(path, "c0")
        await wait_for(lambda: "ZeroDivisionError" in json.dumps(tab.notebook.ycells[0].to_py()))
        proposal = {"path": path, "cell_id": "c0", "source": "1 / 1", "summary": "no zero"}
        loop_model_server.script(
            call_tools((f"{tools}read_cell", {"path": path, "cell_id": "c0"})),
            call_tools((f"{tools}propose_modify", proposal)),
            say("The cell divides by zero; I proposed 1 / 1."),
        )
        await agent.start(path, "Why does the first cell fail?", agent=agent_name)
        asked = await approve_each(agent, path, tab)
        conversation = await agent.ended(path, timeout=60)
        return ErrorAsked(
            path,
            conversation,
            asked,
            list(tab_proposals(tab).values()),
            agent_state(tab)["live"],
            str(tab.notebook.ycells[0].to_py()["source"]),
        )


def said(conversation: dict[str, Any]) -> str:
    """What the agents said in a conversation, one message a line."""
    return "\n".join(m["text"] for m in conversation["messages"] if m["role"] == "assistant")


def is_running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
