"""The ACP tests' set-up: the ``agent`` helper on the test server's REST API."""

from __future__ import annotations

from typing import Any

import pytest
from agent_helpers import Agent


@pytest.fixture
def agent(api: Any) -> Agent:
    return Agent(api)
