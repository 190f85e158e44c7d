"""What a turn and a completion do for a user with fewer rights than another (issue 18).

Two users on one server (``identities.AdaAndBob``): ada may do everything, bob what the
authorizer leaves him; every test runs with a plain and an ``async def`` authorizer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_helpers import AGENT, OPENAI_CHAT, Agent, openai_config, prompt_text, tab_proposals
from authorizers import both
from completion_helpers import COMPLETION
from identities import BOB
from loop_helpers import wait_for
from traitlets.config import Config

from jupyter_loop.testing import call_tools, say

VALUE = "kernel-only-value-5e1d"
"""A value that lives only in the kernel (the notebook's source builds it)."""
SOURCE = "held = 'kernel-only-' + 'value-5e1d'"


@pytest.fixture
def authorizer() -> str:
    return "authorizers.BobNoKernels"


@pytest.fixture
def loop_config(loop_model_server: Any) -> dict[str, Any]:
    return openai_config(loop_model_server, completion_model="scripted-plain")


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.ServerApp.identity_provider_class = "identities.AdaAndBob"
    return jp_server_config


class Bob(Agent):
    """The agent's REST API as bob calls it."""

    def __init__(self, api: Any) -> None:
        async def as_bob(*parts: str, **kwargs: Any) -> Any:
            return await api(*parts, headers=dict(BOB), **kwargs)

        super().__init__(as_bob)


async def ran_in_the_kernel(
    write_notebook: Any, start_kernel: Any, run_cells: Any, open_tab: Any
) -> str:
    """A notebook whose kernel holds :data:`VALUE` (ada ran the cell)."""
    path = write_notebook("held.ipynb", SOURCE, "hel")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
    return path


@pytest.mark.parametrize("authorizer", both("BobNoKernels"))
async def test_a_turn_of_a_user_without_kernel_rights_sees_no_variables(
    write_notebook, start_kernel, run_cells, open_tab, api, loop_model_server
):
    path = await ran_in_the_kernel(write_notebook, start_kernel, run_cells, open_tab)
    loop_model_server.script(call_tools(("list_variables", {})), say("done"))
    bob = Bob(api)
    await bob.start(path, "What does the kernel hold?")
    assert (await bob.ended(path))["turn"]["state"] == "done"
    first, second = loop_model_server.bodies(OPENAI_CHAT)
    sent = prompt_text(first) + prompt_text(second)
    assert VALUE not in sent
    assert "may not read the kernel's variables" in prompt_text(first)
    assert "list_variables" not in [t["function"]["name"] for t in first["tools"]]


@pytest.mark.parametrize("authorizer", both("BobNoKernels"))
async def test_a_completion_for_a_user_without_kernel_rights_sends_no_variables(
    write_notebook, start_kernel, run_cells, open_tab, jp_fetch, loop_model_server
):
    path = await ran_in_the_kernel(write_notebook, start_kernel, run_cells, open_tab)
    body = {"path": path, "cell_id": "c1", "editor_id": "t:c1", "before": "hel", "after": ""}
    for headers in ({}, BOB):  # ada's completion shows the value is within reach
        loop_model_server.script(say("d"))
        await jp_fetch(
            *COMPLETION, "stream", method="POST", body=json.dumps(body), headers=dict(headers)
        )
    ada, bob = loop_model_server.bodies(OPENAI_CHAT)
    assert VALUE in json.dumps(ada)
    assert VALUE not in json.dumps(bob)


@pytest.mark.parametrize("authorizer", both("BobReadOnlyContents"))
async def test_a_turn_of_a_user_who_may_not_write_proposes_nothing(
    write_notebook, open_tab, api, loop_model_server
):
    path = write_notebook("ro.ipynb", "x = 1")
    insert = {"after_cell_id": "c0", "source": "y = 2", "summary": "add y"}
    loop_model_server.script(call_tools(("propose_insert", insert)), say("done"))
    bob = Bob(api)
    async with open_tab(path) as tab:
        await bob.start(path, "Add a cell")
        assert (await bob.ended(path))["turn"]["state"] == "done"
        assert tab_proposals(tab) == {}
    first = loop_model_server.bodies(OPENAI_CHAT)[0]
    offered = [t["function"]["name"] for t in first["tools"]]
    assert not [name for name in offered if name.startswith("propose_")]
    assert "may not edit this notebook" in prompt_text(first)
    journal = await api(*AGENT, "journal", params={"path": path})
    assert [e for e in journal["entries"] if e["action"] == "proposal"] == []
