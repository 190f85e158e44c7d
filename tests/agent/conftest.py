"""Set-up of the agent's tests (``jupyter_loop/agent``): the server's agent pointed at the
scripted model server, and the agent's REST API as the panel calls it.

A module that needs more of the agent's settings overrides ``agent_settings``
(``{"agent_max_steps": 4}``); one that needs another provider or model overrides
``loop_config`` itself. The pure tests here (proposals, tool arguments, the store) ask
for neither, so no model server starts for them.
"""

from __future__ import annotations

from typing import Any

import pytest
from agent_helpers import Agent, openai_config

from jupyter_loop.testing import ScriptedModelServer


@pytest.fixture
def agent_settings() -> dict[str, Any]:
    """``JupyterLoopApp`` settings a module adds to the agent's."""
    return {}


@pytest.fixture
def loop_config(
    loop_model_server: ScriptedModelServer, agent_settings: dict[str, Any]
) -> dict[str, Any]:
    return openai_config(loop_model_server, **agent_settings)


@pytest.fixture
def agent(api: Any) -> Agent:
    return Agent(api)
