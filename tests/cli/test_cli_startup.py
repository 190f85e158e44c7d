"""The terminal client imports only what it uses: ``jupyter loop --help`` starts in a blink.

Importing the server application pulls jupyter_events and jsonschema's URI checks (over a
second alone); the MCP server, Pillow and the model SDKs are the server's, never the CLI's.
Checked in a fresh interpreter, as ``sys.modules`` of this test process holds them all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

SERVER_ONLY = ("jupyter_server.serverapp", "mcp", "PIL", "openai", "ollama", "jsonschema")


def modules_after(statement: str) -> set[str]:
    probe = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=environment, check=True
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_the_cli_does_not_import_the_server_mcp_pillow_or_model_sdks() -> None:
    loaded = modules_after("import jupyter_loop.cli.main")
    assert sorted(name for name in SERVER_ONLY if name in loaded) == []


def test_importing_the_package_leaves_the_server_extension_unloaded_until_asked() -> None:
    loaded = modules_after("import jupyter_loop")
    assert sorted(name for name in SERVER_ONLY if name in loaded) == []
    assert "jupyter_loop.app" not in loaded


def test_the_extension_points_still_name_the_server_app() -> None:
    loaded = modules_after(
        "import jupyter_loop\n"
        "point, = jupyter_loop._jupyter_server_extension_points()\n"
        "assert point['app'].__name__ == 'JupyterLoopApp', point\n"
        "assert jupyter_loop.JupyterLoopApp is point['app']\n"
        "assert jupyter_loop._jupyter_labextension_paths()[0]['dest'] == 'jupyter-loop'"
    )
    assert "jupyter_loop.app" in loaded


def test_the_server_extension_imports_mcp_pillow_and_model_sdks_only_when_used() -> None:
    loaded = modules_after("import jupyter_loop.app")
    unused_at_start = ("mcp", "mcp_types", "PIL", "openai", "ollama")
    assert sorted(name for name in unused_at_start if name in loaded) == []


def test_the_server_extension_leaves_the_assistant_unbuilt_until_a_request_needs_it() -> None:
    loaded = modules_after("import jupyter_loop.app")
    assistant = (
        "jupyter_loop.agent.service",
        "jupyter_loop.completion.service",
        "jupyter_loop.mcp_server.endpoint",
        "jupyter_loop.providers.token_budgets",
    )
    assert sorted(name for name in assistant if name in loaded) == []
