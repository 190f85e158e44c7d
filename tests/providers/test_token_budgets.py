"""Daily token budgets (issue 21, part 6): per user and per notebook, counted for turns and
completions from what the model server reports, a plain refusal at the cap, the count in
``GET status`` (``jupyter loop status``), kept across a restart. Real openai client, the
scripted model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import OPENAI_CHAT, Agent, openai_config, refused
from completion_helpers import COMPLETION, notebook_with_table, request

from jupyter_loop.providers.token_budgets import BudgetLimits, TokenBudgets
from jupyter_loop.testing import call_tools, say


@pytest.fixture
def loop_config(loop_model_server: Any) -> dict[str, Any]:
    return openai_config(
        loop_model_server, budget_tokens_per_user_day=100, budget_tokens_per_notebook_day=1000
    )


async def test_a_user_over_the_daily_cap_is_refused_plainly_everywhere(
    api: Any, write_notebook: Any, jp_fetch: Any, jp_root_dir: Path, loop_model_server: Any
) -> None:
    agent = Agent(api)
    path = write_notebook("nb.ipynb", "1 + 1")
    # The first step reads a cell (80 + 30 tokens): the cap is reached before the second.
    loop_model_server.script(call_tools(("read_cell", {"cell_id": "c0"}), usage=(80, 30)))
    loop_model_server.set_default_reply(say("never asked"))
    await agent.start(path, "What is in the cell?")
    conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "error"
    assert "used your model tokens for today (110 of 100)" in conversation["turn"]["error"]
    assert len(loop_model_server.bodies(OPENAI_CHAT)) == 1
    message = await refused(agent.start(path, "Again?"), 403)
    assert message.startswith("You have used your model tokens for today (110 of 100)")
    table = notebook_with_table(jp_root_dir)
    body = json.dumps(request(table))
    assert "(110 of 100)" in await refused(
        jp_fetch(*COMPLETION, "stream", method="POST", body=body), 403
    )
    assert len(loop_model_server.bodies(OPENAI_CHAT)) == 1  # nothing more reached the model
    status = await api("api", "jupyter-loop", "status")
    assert status["tokens"]["used"] == 110 and status["tokens"]["left"] == 0


def test_the_counts_survive_a_restart_and_a_new_day_starts_afresh(tmp_path: Path) -> None:
    file = tmp_path / "agent" / "token_budgets.json"
    now = [1_800_000_000.0]
    limits = BudgetLimits(per_user_day=1000, per_notebook_day=500)
    first = TokenBudgets(file, limits, clock=lambda: now[0])
    first.account("user ada", "a.ipynb").spend(600)  # no event loop: written at once
    again = TokenBudgets(file, limits, clock=lambda: now[0])
    assert again.usage("user ada")["used"] == 600
    with pytest.raises(Exception, match=r"This notebook has used its model tokens"):
        again.account("user bob", "a.ipynb").check()
    again.account("user bob", "b.ipynb").check()  # another notebook, another user: fine
    now[0] += 86_400
    assert again.usage("user ada")["used"] == 0
    assert oct(file.stat().st_mode & 0o777) == "0o600"
