"""Helpers for MCP tests: call a tool, read the text it gave back, answer its approval, make
a scoped token for an outside agent and the header that carries it."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from jupyter_server.auth.identity import IdentityProvider, User
from mcp.client.session import ClientSession

TOKENS = ("api", "jupyter-loop", "tokens")


async def make(api: Any, scope: str, **extra: Any) -> dict[str, Any]:
    """A scoped token made through the REST API (``scope``: read, propose, run...)."""
    made: dict[str, Any] = await api(*TOKENS, method="POST", body={"scope": scope, **extra})
    return made


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def call(session: ClientSession, name: str, **arguments: Any) -> types.CallToolResult:
    return await session.call_tool(name, arguments)


class NamedUserIdentity(IdentityProvider):
    """Token requests are user 'ada' (Jupyter names each new cookie jar 'Anonymous …')."""

    def generate_anonymous_user(self, handler: Any) -> User:
        return User(username="ada", name="ada", display_name="ada")


def answer_approval(api: Any, path: str, approval: dict[str, Any], decision: str) -> Any:
    """Answer ``approval`` (as a tab shows it) the way a tab's person does, over REST."""
    body = {"path": path, "decision": decision}
    route = ("api", "jupyter-loop", "agent", "approvals", approval["id"])
    return api(*route, method="POST", body=body)


async def approvals_of(api: Any, path: str) -> list[dict[str, Any]]:
    """The notebook's journalled answers to approvals."""
    journal = await api("api", "jupyter-loop", "agent", "journal", params={"path": path})
    return [e for e in journal["entries"] if e["action"] == "approval"]


ASKS_NAME = "name = input('Your name? ')\nprint('hello', name)"
"""A cell that stops on ``input()``; answered ``Ada``, it prints ``hello Ada``."""
