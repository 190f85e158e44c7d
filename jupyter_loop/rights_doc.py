"""``docs/rights.md``, written from the rights table, the routes and the tool registry.

``python -m jupyter_loop.rights_doc > docs/rights.md`` writes it; a test checks that the file
is what this writes, so the document cannot drift from the code that decides. Rejected: a
hand-written table (it would be the fourth place a rule is written).
"""

from __future__ import annotations

import inspect
from typing import Any

from .access.rights import REQUIRES, RIGHTS, Ability, right_name
from .agent.tools import AGENT_TOOLS
from .app import all_routes
from .mcp_server import resources, tasks
from .mcp_server.tools import TOOLS as MCP_TOOLS

METHODS = ("get", "post", "put", "patch", "delete")

INTRO = """\
# Who may do what

jupyter-loop asks Jupyter's own authorizer (`ServerApp.authorizer_class`, JupyterHub's
scopes through it) before anything it does, whatever the channel: the panel's REST calls,
the runs websocket, the assistant's turns, inline completions and the MCP endpoint. Every
channel asks through one table (`jupyter_loop/access/rights.py`), every answer awaited (an
authorizer's `is_authorized` may be `async def`).

This file is written by `python -m jupyter_loop.rights_doc > docs/rights.md`; a test fails
when it differs from what the code decides.
"""


def _ability_rows() -> list[str]:
    rows = ["| Ability | Needs | What it covers |", "| --- | --- | --- |"]
    for ability in Ability:
        needs = " and ".join(f"`{right_name(right)}`" for right in RIGHTS[ability])
        rows.append(f"| {ability.value} | {needs} | {_what(ability)} |")
    return rows


def _what(ability: Ability) -> str:
    """The ability's one-line description: the docstring under its member in ``rights.py``."""
    source = inspect.getsource(Ability)
    marker = f'{ability.name} = "{ability.value}"'
    after = source.split(marker, 1)[1]
    return after.split('"""', 2)[1].strip()


def _route_rows() -> list[str]:
    rows = ["| Route (under `{base_url}`) | Method | Ability |", "| --- | --- | --- |"]
    for pattern, handler in all_routes():
        for method in METHODS:
            function: Any = getattr(handler, method, None)
            needed = getattr(function, REQUIRES, None)
            if needed is None:
                continue
            route = pattern.lstrip("/").replace("([A-Za-z0-9_-]{1,64})", "{id}")
            # ``@requires()``: a route any client may read before it has a credential
            shown = " and ".join(ability.value for ability in needed) or "none (public)"
            rows.append(f"| `{_simplify(route)}` | {method.upper()} | {shown} |")
    return rows


def _simplify(route: str) -> str:
    """A route's regular expression as people read it (ids and names in braces)."""
    route = route.replace("(?:/([0-9]+))?", "[/{part}]")
    while "(" in route:
        start = route.index("(")
        depth, end = 0, start
        for end in range(start, len(route)):
            depth += {"(": 1, ")": -1}.get(route[end], 0)
            if depth == 0:
                break
        route = route[:start] + "{…}" + route[end + 1 :]
    return route.replace("?", "")


def _tool_rows() -> list[str]:
    rows = ["| Tool | Turns | MCP | Ability |", "| --- | --- | --- | --- |"]
    abilities: dict[str, Ability] = {}
    turns = {tool.spec.name for tool in AGENT_TOOLS}
    mcp = {tool.spec.name for tool in MCP_TOOLS}
    for tool in AGENT_TOOLS:
        abilities[tool.spec.name] = tool.ability
    for mcp_tool in MCP_TOOLS:
        abilities.setdefault(mcp_tool.spec.name, mcp_tool.ability)
    for name, ability in abilities.items():
        yes = ("yes" if name in turns else "—", "yes" if name in mcp else "—")
        rows.append(f"| `{name}` | {yes[0]} | {yes[1]} | {ability.value} |")
    rows.append(f"| `{resources.METHOD}` (cell outputs) | — | yes | {resources.ABILITY.value} |")
    for method, ability in tasks.ABILITIES.items():
        rows.append(f"| `{method}` (a task's maker only) | — | yes | {ability.value} |")
    return rows


NOTES = """\
## What else holds

- **Turns.** Starting a turn needs *read*. The turn is offered the tools of its user's
  abilities: without *propose* no `propose_*` tool, without *variables* no `list_variables`
  and no kernel variables in the prompt (the prompt says which). `run_cells` stays offered:
  without *run* it answers that the user may not run cells, before any approval is asked.
- **Completions** need *read*; the kernel's variables are read for them only with
  *variables*.
- **MCP.** The endpoint needs *read*; each tool call is then checked against the table above
  (an MCP client is told `Forbidden: … needs the permission …`; a scoped token refused by
  its scope is told what the scope allows instead: `Forbidden: this token's scope is
  propose: it cannot run cells (run_cells)`, and which scope would do). A session belongs to the
  principal who opened it (the Jupyter user; every holder of the server's own token is one):
  another user's requests naming it are answered 404, by the MCP SDK's own check. An
  approval's "allow for the turn" holds for that principal on a session the server minted;
  without one (the 2026 protocol's stateless requests) it holds for the one call.
- **Tasks.** A `run_cells` call answered with a task (the MCP tasks extension) is
  checked as the call; its task is then seen by its maker alone (the same principal: a
  token the user made is another), and each of its methods needs the ability above.
- **Journal.** Every MCP `tools/call` is journaled, refused and unknown ones too: in the
  notebook's journal, or in the server journal when it names no notebook
  (`api/jupyter-loop/agent/server-journal`). A client's name is its own claim: shown as
  `an MCP client of USER, calling itself "NAME"`, without control characters, at most 60
  characters.
- **Scoped tokens** (`api/jupyter-loop/tokens`, `jupyter loop token`) are made, listed and
  revoked with the user's own credential (*read*, and a token's scope must be within the
  maker's rights: a 403 otherwise). Only the MCP endpoint takes one; its rights are those
  the authorizer grants the maker, cut to the scope (`read`: *contents:read*; `propose`:
  and *contents:write*; `run`: and *kernels:execute*, *kernels:read*), and a token for one
  notebook is refused every other path and `list_notebooks`.
- **ACP agents** (`api/jupyter-loop/agents` lists them, *see_kernels*). A turn with one
  (`POST agent/turns` with `agent`) needs *run*: its process runs on the server as the
  server's user, as a kernel does. Its session gets a scoped token for its notebook, at
  most `run` (`propose` under the approval policy `never`), revoked when the session ends;
  its own file requests need *read* (reading) and *propose* (writing: a notebook becomes
  proposals), and its permission requests are approvals, answered with *run*.
"""


def render() -> str:
    parts = [
        INTRO,
        "## Abilities\n",
        "\n".join(_ability_rows()) + "\n",
        "## Routes\n",
        "\n".join(_route_rows()) + "\n",
        "## Tools\n",
        "\n".join(_tool_rows()) + "\n",
        NOTES,
    ]
    return "\n".join(parts)


if __name__ == "__main__":
    print(render(), end="")
