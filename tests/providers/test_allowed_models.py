"""An administrator's model allow-list holds for turns, completions and the panel's picker
(issue 21, part 6): a request naming another model is refused with a plain 403 before any
model call, and with no model named the first allowed one is used."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_helpers import AGENT, OPENAI_CHAT, Agent, openai_config, refused
from completion_helpers import COMPLETION, lines, notebook_with_table, request

from jupyter_loop.testing import say


@pytest.fixture
def loop_config(loop_model_server: Any) -> dict[str, Any]:
    # The configured default (scripted-plain) is not on the list: the list wins.
    return openai_config(
        loop_model_server, agent_model="scripted-plain", allowed_models=["scripted-tools", "*-vis*"]
    )


async def test_the_picker_lists_only_allowed_models(api: Any) -> None:
    models = await api(*AGENT, "models")
    assert models["models"] == ["scripted-tools", "scripted-vision"]
    assert models["default_model"] == "scripted-tools"


async def test_a_turn_naming_another_model_is_refused_and_none_named_uses_an_allowed_one(
    api: Any, write_notebook: Any, loop_model_server: Any
) -> None:
    agent = Agent(api)
    path = write_notebook("nb.ipynb", "1 + 1")
    message = await refused(agent.start(path, "hi", model="scripted-plain"), 403)
    assert message == (
        "The model 'scripted-plain' is not allowed on this server; allowed: scripted-tools, "
        "*-vis* (c.JupyterLoopApp.allowed_models)."
    )
    assert loop_model_server.bodies(OPENAI_CHAT) == []  # refused before any model call
    loop_model_server.script(say("hello"))
    await agent.start(path, "hi")
    await agent.ended(path)
    assert [body["model"] for body in loop_model_server.bodies(OPENAI_CHAT)] == ["scripted-tools"]


async def test_a_completion_naming_another_model_is_refused(
    jp_fetch: Any, jp_root_dir: Any, loop_model_server: Any
) -> None:
    path = notebook_with_table(jp_root_dir)
    body = json.dumps(request(path, model="scripted-plain"))
    message = await refused(jp_fetch(*COMPLETION, "stream", method="POST", body=body), 403)
    assert "'scripted-plain' is not allowed" in message
    loop_model_server.script(say("ice"))
    answered = await jp_fetch(*COMPLETION, "stream", method="POST", body=json.dumps(request(path)))
    assert lines(answered.body)[-1] == {"done": True, "error": None}
    assert [body["model"] for body in loop_model_server.bodies(OPENAI_CHAT)] == ["scripted-tools"]
