"""The MCP host matrix: each client library a host is built on, against a real server.

For every library that is installed here (the official Python SDK on both protocols;
agent frameworks' adapters and other clients, ``host_frameworks.FRAMEWORKS``; the
TypeScript SDK 1.x and the 2.x client through ``tests/mcp_ts_client.mjs``, when ``node``
and the packages of the root ``package.json`` are there), as a new user wires it: connect,
list the tools, read a cell's text, a cell's image, a resource (a long output's link),
run a cell, run it as a task (in the shape the library's protocol defines), propose a
cell, be refused by a propose-only token's scope, and show the server's own words when
called without a token. :func:`table` prints a ✔/✘ table (``–``: the library has no such
feature) and what failed. The server runs with ``approval_policy=always`` (no person is
asked). ``bench/mcp_hosts.py`` runs it on a server of its own;
``tests/mcp_server/test_mcp_hosts.py`` on the test server.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: a library run in another environment needs none
    import mcp_types as types

COLUMNS = (
    "connect", "list", "read text", "image", "resource", "run", "task", "propose",
    "scope refusal", "error text",
)  # fmt: skip
MARKER = "hello-matrix"
PATH = "matrix.ipynb"
UNAUTHENTICATED = "A valid Jupyter token is required"
"""The server's own words for a call without a token (``mcp_server/handler.py``)."""
REFUSED = "this token's scope is propose: it cannot run cells"
"""The server's own words for a propose-only token's ``run_cells`` (``refusals.py``)."""
REPO = Path(__file__).resolve().parents[2]
TS_SCRIPT = REPO / "tests" / "mcp_ts_client.mjs"
NODE_PACKAGES = {
    "ts1": ("@modelcontextprotocol/sdk",),
    "ts2": ("@modelcontextprotocol/client", "@modelcontextprotocol/ext-tasks"),
}
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)


@dataclass(frozen=True)
class Cell:
    ok: bool | None  # None: the library has no such feature
    detail: str = ""

    @property
    def mark(self) -> str:
        return "–" if self.ok is None else "✔" if self.ok else "✘"


@dataclass
class Row:
    library: str
    version: str
    cells: dict[str, Cell] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    """The server the matrix runs against: its MCP URL, a token with every right, a
    propose-only scoped token; the notebook ``PATH`` is in its root."""

    url: str
    token: str
    scoped_token: str

    def ts_config(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "token": self.token,
            "scopedToken": self.scoped_token,
            "path": PATH,
            "textCell": "c0",
            "imageCell": "c1",
            "longCell": "c2",
            "marker": MARKER,
            "unauthenticatedWords": UNAUTHENTICATED,
            "refusedWords": REFUSED,
        }


def notebook() -> str:
    """A text cell, an image cell and a long output, with their outputs already there."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    cells = [
        (f"print('{MARKER}')", nbformat.v4.new_output("stream", name="stdout", text=MARKER)),
        ("show()", nbformat.v4.new_output("display_data", data={"image/png": PNG})),
        ("print('x' * 5000)", nbformat.v4.new_output("stream", name="stdout", text="x" * 5000)),
    ]
    for index, (source, output) in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source, outputs=[output], execution_count=index + 1)
        cell["id"] = f"c{index}"
        nb.cells.append(cell)
    return nbformat.writes(nb)


async def prepare(root: Path, base_url: str, token: str) -> Target:
    """Write the notebook and make a propose-only token (``base_url`` ends with ``/``)."""
    import httpx2

    (root / PATH).write_text(notebook(), encoding="utf-8")
    async with httpx2.AsyncClient(headers={"Authorization": f"token {token}"}) as http:
        made = await http.post(f"{base_url}api/jupyter-loop/tokens", json={"scope": "propose"})
        made.raise_for_status()
    return Target(f"{base_url}api/jupyter-loop/mcp", token, made.json()["token"])


# -- the official Python SDK ------------------------------------------------------------


def _text(result: types.CallToolResult) -> str:
    import mcp_types as types

    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def _cell(check: Callable[[], Awaitable[tuple[bool | None, str]]]) -> Cell:
    try:
        ok, detail = await check()
        return Cell(ok, detail[:300])
    except Exception as e:  # the column failed: its text is what the library shows
        return Cell(False, f"{type(e).__name__}: {e}"[:300])


async def python_sdk(target: Target, modern: bool) -> Row:
    from importlib.metadata import version

    import httpx2
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from jupyter_loop.testing.task_client import CLAIMS, TASKS, CreatedTask, task_method

    protocol = "2026-07-28" if modern else "2025-11-25"
    row = Row(f"Python SDK ({protocol})", version("mcp"))

    def connect(token: str, tasks: bool = False) -> Any:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def session() -> Any:
            headers = {"Authorization": f"token {token}"} if token else {}
            extensions: dict[str, dict[str, Any]] | None = {TASKS: {}} if tasks else None
            async with (
                httpx2.AsyncClient(headers=headers, timeout=120) as http,
                streamable_http_client(target.url, http_client=http) as (read, write),
                ClientSession(
                    read, write, extensions=extensions, result_claims=CLAIMS if tasks else None
                ) as client,
            ):
                await (client.discover() if modern else client.initialize())
                yield client

        return session()

    async with connect(target.token) as client:
        row.cells["connect"] = Cell(True, "connected")

        async def call(name: str, **arguments: Any) -> types.CallToolResult:
            return await client.call_tool(name, {"path": PATH, **arguments})

        async def listed() -> tuple[bool, str]:
            tools = (await client.list_tools()).tools
            run = next(t for t in tools if t.name == "run_cells")
            return run.annotations is not None, f"{len(tools)} tools"

        async def read_text() -> tuple[bool, str]:
            text = _text(await call("read_cell", cell_id="c0"))
            return MARKER in text, text[:80]

        async def image() -> tuple[bool, str]:
            result = await call("read_cell", cell_id="c1")
            found = [c for c in result.content if isinstance(c, types.ImageContent)]
            return [c.mime_type for c in found] == ["image/png"], f"{len(found)} image"

        async def resource() -> tuple[bool, str]:
            result = await call("get_outputs", cell_id="c2")
            link = next(c for c in result.content if isinstance(c, types.ResourceLink))
            [content] = (await client.read_resource(link.uri)).contents
            text = getattr(content, "text", "")
            return len(text) > 2000, f"{len(text)} characters"

        async def run() -> tuple[bool, str]:
            result = await call("run_cells", cell_ids=["c0"])
            return not result.is_error and MARKER in _text(result), _text(result)[:80]

        async def task() -> tuple[bool | None, str]:
            if not modern:
                return None, "the SDK's client has no 2025-11-25 tasks"
            async with connect(target.token, tasks=True) as tasking:
                created = await tasking.call_tool(
                    "run_cells", {"path": PATH, "cell_ids": ["c0"]}, allow_claimed=True
                )
                assert isinstance(created, CreatedTask), created
                for _ in range(600):
                    state = await task_method(tasking, "tasks/get", created.task_id)
                    if state.status != "working":
                        break
                    await asyncio.sleep(0.2)
            result = types.CallToolResult.model_validate(state.result or {"content": []})
            return MARKER in _text(result), f"task → {state.status}"

        async def propose() -> tuple[bool, str]:
            text = _text(await call("propose_insert", source="x = 1", summary="matrix"))
            return "Proposal" in text, text[:80]

        checks = [
            ("list", listed), ("read text", read_text), ("image", image),
            ("resource", resource), ("run", run), ("task", task), ("propose", propose),
        ]  # fmt: skip
        for name, check in checks:
            row.cells[name] = await _cell(check)

    async def refused() -> tuple[bool, str]:
        async with connect(target.scoped_token) as scoped:
            result = await scoped.call_tool("run_cells", {"path": PATH, "cell_ids": ["c0"]})
            return result.is_error and REFUSED in _text(result), _text(result)

    async def unauthenticated() -> tuple[bool, str]:
        try:
            async with connect(""):
                return False, "connected without a token"
        except BaseException as e:  # an exception group from the SDK's task group
            text = leaf_text(e)
            return UNAUTHENTICATED in text, text

    row.cells["scope refusal"] = await _cell(refused)
    row.cells["error text"] = await _cell(unauthenticated)
    return row


def leaf_text(error: BaseException) -> str:
    """The text of the innermost errors of an exception group (what a user reads)."""
    inner = getattr(error, "exceptions", None)  # an exception group (Python 3.11+)
    if isinstance(inner, tuple | list) and inner:
        return "; ".join(leaf_text(one) for one in inner)
    return f"{type(error).__name__}: {error}"


# -- the TypeScript libraries -----------------------------------------------------------


def node_libraries(repo: Path = REPO) -> list[str]:
    """The TypeScript libraries installed in the repository's ``node_modules`` (none
    without ``node``, or outside a checkout)."""
    if shutil.which("node") is None or not TS_SCRIPT.exists():
        return []
    modules = repo / "node_modules"
    return [
        name
        for name, packages in NODE_PACKAGES.items()
        if all((modules / package / "package.json").exists() for package in packages)
    ]


async def typescript(target: Target, library: str) -> Row:
    config = json.dumps(target.ts_config())
    done = await asyncio.to_thread(
        subprocess.run,
        ["node", str(TS_SCRIPT), library, config],
        capture_output=True,
        text=True,
        timeout=600,
    )
    names = {"ts1": "TypeScript SDK 1.x", "ts2": "TypeScript client 2.x"}
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        row = Row(names[library], "?")
        row.cells["connect"] = Cell(False, (done.stderr or done.stdout)[-300:])
        return row
    row = Row(names[library], found["version"])
    for name, cell in found["columns"].items():
        row.cells[name] = Cell(cell["ok"], cell["detail"])
    return row


async def matrix(target: Target) -> list[Row]:
    rows = [await python_sdk(target, modern=False), await python_sdk(target, modern=True)]
    from .host_frameworks import FRAMEWORKS

    for framework in FRAMEWORKS:
        found = await framework(target)
        if found is not None:
            rows.append(found)
    for library in node_libraries():
        rows.append(await typescript(target, library))
    return rows


def table(rows: list[Row]) -> str:
    """The matrix as a Markdown table, then what failed."""
    lines = [
        "| library | version | " + " | ".join(COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    failures = []
    for row in rows:
        marks = [row.cells.get(name, Cell(False, "not run")).mark for name in COLUMNS]
        lines.append(f"| {row.library} | {row.version} | " + " | ".join(marks) + " |")
        failures += [
            f"- {row.library}, {name}: {cell.detail}"
            for name, cell in row.cells.items()
            if cell.ok is False
        ]
    return "\n".join(lines + ([""] + failures if failures else []))
