"""A turn's budgets apply to ACP agents as to the built-in assistant: the time a turn may
take (``acp_turn_timeout``: ``session/cancel``, then a plain message) and the day's token
caps (``budget_tokens_per_user_day``), counted from the usage the agent reports in its
prompt response. The scripted agent (written with the ACP SDK) runs as a real process."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest
from agent_helpers import Agent, refused, said

SCRIPTED = {"command": [sys.executable, "-m", "jupyter_loop.testing.acp_agent"]}


def config(**extra: Any) -> dict[str, Any]:
    return {
        "acp_agents": {"scripted": SCRIPTED},
        "acp_presets": False,
        "batch_interval": 0.01,
        **extra,
    }


@pytest.mark.parametrize("loop_config", [config(budget_tokens_per_user_day=100)])
async def test_the_tokens_an_agent_reports_count_against_the_days_budget(
    agent: Agent, write_notebook: Any, api: Any
) -> None:
    path = write_notebook("budget.ipynb", "1")
    await agent.start(path, "usage 80 40\nsay spent", agent="scripted")
    conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "done"
    assert conversation["turn"]["usage"] == {"input_tokens": 80, "output_tokens": 40}
    ends = [e for e in await agent.journal(path) if e["action"] == "turn_end"]
    assert ends[-1]["details"]["usage"] == {"input_tokens": 80, "output_tokens": 40}
    status = await api("api", "jupyter-loop", "status")
    assert status["tokens"]["used"] == 120
    # Over the cap: the next turn is refused before any agent starts.
    message = await refused(agent.start(path, "say again", agent="scripted"), 403)
    assert "You have used your model tokens for today (120 of 100)" in message


@pytest.mark.parametrize("loop_config", [config(acp_turn_timeout=1.0)])
async def test_a_turn_over_its_time_is_cancelled_and_the_session_goes_on(
    agent: Agent, write_notebook: Any
) -> None:
    path = write_notebook("slow.ipynb", "1")
    await agent.start(path, "pid\nhang", agent="scripted")
    conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "error"
    assert conversation["turn"]["error"] == (
        "scripted took longer than 1 s; the turn was cancelled (c.JupyterLoopApp.acp_turn_timeout)."
    )
    first = int(re.findall(r"pid (\d+)", said(conversation))[0])
    await agent.start(path, "pid", agent="scripted")
    again = int(re.findall(r"pid (\d+)", said(await agent.ended(path)))[-1])
    assert again == first  # the agent ended its prompt on session/cancel: it was not killed
