"""The manual's MCP client set-ups run as printed (docs/manual/mcp-and-terminal.md), against
a real server process, with a scoped token made by ``jupyter loop token create``: the MCP
Python SDK program (after ``<!-- mcp-python-client -->``), the TypeScript SDK 1.x program
(``<!-- mcp-ts-client -->``, when ``jlpm install`` has brought the SDK), the fastmcp program
(``<!-- mcp-fastmcp-client -->``), and the Cursor / VS Code JSON (``<!-- mcp-json-config
-->``) as two libraries that read that format take it: fastmcp's ``Client`` and the MCP
Inspector's CLI (``--config``, when installed; ``host_libraries.INSPECTOR``), and Claude
Desktop's JSON started by that CLI (its ``npx -y mcp-remote`` bridge). Claude Code's, Cursor's,
VS Code's and Claude Desktop's own programs do not run here."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json
from test_cli import loop

from jupyter_loop.testing.host_libraries import INSPECTOR
from jupyter_loop.testing.host_matrix import REPO, node_libraries
from jupyter_loop.testing.server_process import ServerProcess

MANUAL = Path(__file__).resolve().parents[2] / "docs" / "manual" / "mcp-and-terminal.md"
PRINTED_URL = "http://127.0.0.1:8888/api/jupyter-loop/mcp"
PRINTED_TOKEN = "jlt_…"


def snippet(marker: str, language: str) -> str:
    """The first ``language`` block after ``<!-- marker -->``, as printed (a block inside
    a list item loses its indentation)."""
    after = MANUAL.read_text("utf-8").split(f"<!-- {marker} -->", 1)[1]
    block = after.split(f"```{language}\n", 1)[1].split("```", 1)[0]
    return textwrap.dedent(block)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path)
    process.start()
    try:
        yield process
    finally:
        process.kill()


async def read_token(server: ServerProcess) -> str:
    """The notebook the snippets read, and a read-scoped token as the manual makes it."""
    (server.root / "analysis.ipynb").write_text(notebook_json("total = 6 * 7"), "utf-8")
    code, out, err = await loop(server, "token", "create", "--scope", "read")
    assert code == 0, err
    return str(out.splitlines()[-1])


def for_server(text: str, server: ServerProcess, token: str) -> str:
    """The printed text with this server's URL and the token in place of the examples."""
    assert PRINTED_URL in text and PRINTED_TOKEN in text, text
    url = server.url("api", "jupyter-loop", "mcp")
    return text.replace(PRINTED_URL, url).replace(PRINTED_TOKEN, token)


async def run(*command: str, source: str, cwd: Path | None = None) -> str:
    """Run ``command`` with ``source`` on its stdin; what it printed (it must succeed)."""
    process = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ}, cwd=cwd,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(source.encode()), 120)
    assert process.returncode == 0, err.decode()[-2000:]
    return out.decode()


def read_the_notebook(printed: str) -> None:
    """What each program prints: the tools' names, then the notebook as read_notebook reads it."""
    assert "read_notebook" in printed.splitlines()[0], printed
    assert "Notebook analysis.ipynb." in printed and "total = 6 * 7" in printed, printed


@pytest.mark.timeout(240)
async def test_the_manuals_mcp_client_reads_a_notebook(server: ServerProcess) -> None:
    program = for_server(snippet("mcp-python-client", "python"), server, await read_token(server))
    read_the_notebook(await run(sys.executable, "-", source=program))


@pytest.mark.timeout(240)
async def test_the_manuals_typescript_client_reads_a_notebook(server: ServerProcess) -> None:
    if "ts1" not in node_libraries():
        pytest.skip("the TypeScript SDK 1.x is not installed (jlpm install)")
    program = for_server(snippet("mcp-ts-client", "js"), server, await read_token(server))
    # From the repository, so that its node_modules is where the import is found.
    read_the_notebook(await run("node", "--input-type=module", "-", source=program, cwd=REPO))


@pytest.mark.timeout(240)
async def test_the_manuals_fastmcp_client_reads_a_notebook(server: ServerProcess) -> None:
    pytest.importorskip("fastmcp")
    program = for_server(snippet("mcp-fastmcp-client", "python"), server, await read_token(server))
    read_the_notebook(await run(sys.executable, "-", source=program))


@pytest.mark.timeout(240)
async def test_the_manuals_json_config_is_read_by_a_client(server: ServerProcess) -> None:
    """The Cursor / VS Code JSON, as printed: fastmcp's ``Client`` takes it whole."""
    pytest.importorskip("fastmcp")
    from fastmcp import Client

    config = json.loads(
        for_server(snippet("mcp-json-config", "json"), server, await read_token(server))
    )
    async with Client(config, timeout=60) as client:
        names = sorted(tool.name for tool in await client.list_tools())
        result = await client.call_tool("read_notebook", {"path": "analysis.ipynb"})
    read_the_notebook(f"{names}\n{result.content[0].text}")  # type: ignore[union-attr]


@pytest.mark.timeout(240)
async def test_the_manuals_json_config_is_read_by_the_inspector(
    server: ServerProcess, tmp_path: Path
) -> None:
    """The same JSON given to the MCP Inspector's CLI (``--config FILE --server jupyter``:
    a read-only session file, so it writes no catalog of its own). Without a ``type`` it
    takes a server for a command to start (stdio), as VS Code does: the manual says to add
    ``"type": "http"`` for VS Code, and that is what the Inspector needs too."""
    entry = INSPECTOR / "clients" / "launcher" / "build" / "index.js"
    if not entry.exists():
        pytest.skip(f"the MCP Inspector is not installed ({INSPECTOR})")
    config = tmp_path / "mcp.json"
    token = await read_token(server)
    printed = json.loads(for_server(snippet("mcp-json-config", "json"), server, token))
    # It reads VS Code's form: the manual's JSON with "type": "http", as the manual says.
    printed["mcpServers"]["jupyter"]["type"] = "http"
    config.write_text(json.dumps(printed), "utf-8")
    common = ["node", str(entry), "--cli", "--config", str(config), "--server", "jupyter"]

    async def inspector(*args: str) -> dict[str, object]:
        process = await asyncio.create_subprocess_exec(
            *common, "--stored-auth-only", *args, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), 120)
        assert process.returncode == 0, err.decode()[-2000:]
        found: dict[str, object] = json.loads(out)
        return found

    listed = await inspector("--method", "tools/list")
    names = sorted(tool["name"] for tool in listed["tools"])  # type: ignore[attr-defined]
    args = ["--tool-name", "read_notebook", "--tool-arg", "path=analysis.ipynb"]
    read = await inspector("--method", "tools/call", *args)
    read_the_notebook(f"{names}\n{read['content'][0]['text']}")  # type: ignore[index]


@pytest.mark.timeout(300)
async def test_the_manuals_claude_desktop_config_runs_its_bridge(
    server: ServerProcess, tmp_path: Path
) -> None:
    """Claude Desktop's JSON, as printed, started by the MCP Inspector's CLI as a host
    starts it (a command: ``npx -y mcp-remote …``, which npm fetches, with the token in its
    ``env``): the bridge lists the tools and reads the notebook."""
    entry = INSPECTOR / "clients" / "launcher" / "build" / "index.js"
    if not entry.exists() or shutil.which("npx") is None:
        pytest.skip(f"the MCP Inspector or npx is not installed ({INSPECTOR})")
    text = MANUAL.read_text("utf-8")
    after = text[text.index("Claude Desktop (`claude_desktop_config.json`)") :]
    printed = textwrap.dedent(after.split("```json\n", 1)[1].split("```", 1)[0])
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(for_server(printed, server, await read_token(server)), "utf-8")
    common = ["node", str(entry), "--cli", "--config", str(config), "--server", "jupyter"]

    async def inspector(*args: str) -> Any:
        process = await asyncio.create_subprocess_exec(
            *common, *args, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), 240)
        assert process.returncode == 0, err.decode()[-2000:]
        return json.loads(out)

    names = sorted(tool["name"] for tool in (await inspector("--method", "tools/list"))["tools"])
    args = ["--tool-name", "read_notebook", "--tool-arg", "path=analysis.ipynb"]
    read = await inspector("--method", "tools/call", *args)
    read_the_notebook(f"{names}\n{read['content'][0]['text']}")
