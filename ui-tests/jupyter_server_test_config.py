"""JupyterLab server for the browser tests: galata's settings plus jupyter-loop's."""

import os
import sys
import tempfile
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821 (c is the config object of this file)

c.ServerApp.ip = "127.0.0.1"
c.ServerApp.port = int(os.environ.get("LOOP_UI_PORT", "8888"))
# Short delays, so a closed tab's room would be evicted within a test if it were not pinned.
c.YDocExtension.document_cleanup_delay = 5
c.JupyterLoopApp.save_interval = 1.0
c.ServerApp.allow_root = True  # CI runs as root
# LOOP_UI_KEEP_KERNELS=never: kernels end with the server (a crash then cuts a run off).
c.JupyterLoopApp.keep_kernels = os.environ.get("LOOP_UI_KEEP_KERNELS") or "crash"

# LOOP_UI_LABEXTENSION=<a checkout>/jupyter_loop/labextension loads that build of the front
# end instead of the installed one (`jupyter labextension develop` links one checkout for the
# whole environment; relinking it would change what every other checkout tests).
if os.environ.get("LOOP_UI_LABEXTENSION"):
    _labextensions = Path(tempfile.mkdtemp(prefix="loop-ui-labextensions-"))
    (_labextensions / "jupyter-loop").symlink_to(
        Path(os.environ["LOOP_UI_LABEXTENSION"]).resolve(), target_is_directory=True
    )
    # Before galata's helper extension, which configure_jupyter_server set there (a str).
    _galata = c.LabServerApp.extra_labextensions_path
    _galata = [_galata] if isinstance(_galata, str) else list(_galata or [])
    c.LabServerApp.extra_labextensions_path = [str(_labextensions), *_galata]

# Keep the server's databases out of the source tree.
# (LOOP_UI_STATE_DIR keeps them across a server restart made by a test.)
_state = Path(os.environ.get("LOOP_UI_STATE_DIR") or tempfile.mkdtemp(prefix="loop-ui-state-"))
_state.mkdir(parents=True, exist_ok=True)
# LOOP_UI_DEFAULT_STORE=1 leaves the collaboration store where a plain `jupyter lab` has it
# (`.jupyter_ystore.db` in the working directory), as a new user's server does.
if not os.environ.get("LOOP_UI_DEFAULT_STORE"):
    c.SQLiteYStore.db_path = str(_state / "ystore.db")
c.BaseFileIdManager.db_path = str(_state / "fileid.db")
c.JupyterLoopApp.data_dir = str(_state / "jupyter_loop")

# Inline completions would answer every keystroke with the scripted replies other tests
# queue for the assistant: off by default here; inline-completion.spec.ts turns them on.
_settings = _state / "lab-settings"
_settings.mkdir(exist_ok=True)
(_settings / "overrides.json").write_text(
    '{"@jupyterlab/completer-extension:inline-completer": '
    '{"providers": {"jupyter-loop:inline": {"enabled": false}}}}'
)
c.LabApp.app_settings_dir = str(_settings)

# The AI agent's provider: the scripted model server, run in this process for the whole
# session (it stops with the server). Tests script it over HTTP at the URL written to
# /tmp/jupyter-loop-model-server-<port>.url. LOOP_AGENT_PROVIDER=none starts a server with
# no provider at all (the agent tests start one to see the configuration hint).
for _name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST"):
    os.environ.pop(_name, None)
if os.environ.get("LOOP_AGENT_PROVIDER", "openai") != "none":
    from jupyter_loop.testing import ScriptedModelServer

    _model_server = ScriptedModelServer().start()
    c.JupyterLoopApp.agent_provider = "openai"
    c.JupyterLoopApp.openai_base_url = _model_server.openai_base_url
    c.JupyterLoopApp.openai_api_key = "sk-scripted-test-key"
    c.JupyterLoopApp.agent_model = "scripted-tools"
    # A cap no test reaches, so the panel's foot shows the day's budget.
    c.JupyterLoopApp.budget_tokens_per_user_day = 10_000_000
    Path(tempfile.gettempdir(), f"jupyter-loop-model-server-{c.ServerApp.port}.url").write_text(
        _model_server.url
    )

# LOOP_UI_ACP_AGENT=scripted: the scripted ACP agent (jupyter_loop/testing/acp_agent.py) is
# offered in the panel's agent picker (acp-agent.spec.ts starts a server of its own with it,
# so the other tests' panel has no picker).
if os.environ.get("LOOP_UI_ACP_AGENT") == "scripted":
    c.JupyterLoopApp.acp_presets = False
    c.JupyterLoopApp.acp_agents = {
        "scripted": {
            "command": [sys.executable, "-m", "jupyter_loop.testing.acp_agent"],
            "label": "Scripted ACP agent",
            # Its sessions kept on disk with the server's state: a restarted server's
            # turn loads the earlier session (session/load), as an agent with history does.
            "env": {"SCRIPTED_ACP_STATE": str(_state / "scripted-acp-sessions")},
        },
        # The same agent keeping nothing (no loadSession): after a restart it starts anew.
        "forgetful": {
            "command": [sys.executable, "-m", "jupyter_loop.testing.acp_agent"],
            "label": "Forgetful ACP agent",
        },
    }
    # LOOP_UI_QWEN=<the qwen command of `npm install @qwen-code/qwen-code`>: Qwen Code too,
    # its model the scripted model server above (the tests script its tool calls).
    if os.environ.get("LOOP_UI_QWEN") and os.environ.get("LOOP_AGENT_PROVIDER") != "none":
        _qwen_home = _state / "qwen-home"
        _qwen_home.mkdir(exist_ok=True)
        c.JupyterLoopApp.acp_agents["qwen"] = {
            "command": [os.environ["LOOP_UI_QWEN"], "--acp"],
            "label": "Qwen Code",
            "env": {
                "HOME": str(_qwen_home),
                "OPENAI_API_KEY": "sk-real-agent-test",
                "OPENAI_BASE_URL": _model_server.openai_base_url,
                "OPENAI_MODEL": "scripted-tools",
            },
        }
    # LOOP_UI_CODEX=<the codex-acp command of `npm install @zed-industries/codex-acp`>:
    # Codex too, its provider the scripted server's Responses API (the only one Codex
    # speaks), given with codex-acp's `-c` overrides and a CODEX_HOME of its own.
    if os.environ.get("LOOP_UI_CODEX") and os.environ.get("LOOP_AGENT_PROVIDER") != "none":
        _codex_home = _state / "codex-home"
        _codex_home.mkdir(exist_ok=True)
        _provider = (
            f'{{name = "scripted", base_url = "{_model_server.openai_base_url}", '
            'env_key = "OPENAI_API_KEY", wire_api = "responses"}'
        )
        c.JupyterLoopApp.acp_agents["codex"] = {
            "command": [
                os.environ["LOOP_UI_CODEX"],
                "-c",
                'model = "scripted-tools"',
                "-c",
                'model_provider = "scripted"',
                "-c",
                f"model_providers.scripted = {_provider}",
            ],
            "label": "Codex",
            "env": {
                "HOME": str(_codex_home),
                "CODEX_HOME": str(_codex_home),
                "OPENAI_API_KEY": "sk-real-agent-test",
            },
        }
