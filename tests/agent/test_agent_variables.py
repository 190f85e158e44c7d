"""The agent sees the kernel's variables: a context section and the list_variables tool."""

from __future__ import annotations

from agent_helpers import OPENAI_CHAT, Agent, prompt_text
from loop_helpers import wait_for

from jupyter_loop.testing import call_tools, say

DATA = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'region': ['north', 'south'], 'revenue': [1.5, 2.5]})\n"
    "threshold = 7"
)


async def test_the_model_sees_variables_and_can_list_them(
    write_notebook, start_kernel, run_cells, open_tab, api, loop_model_server
):
    path = write_notebook("vars.ipynb", DATA, "threshold * 2")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        loop_model_server.script(call_tools(("list_variables", {})), say("sales has 2 columns."))
        agent = Agent(api)
        await agent.start(path, "Which columns does sales have?")
        conversation = await agent.ended(path)
        assert conversation["turn"]["state"] == "done"
        first, second = loop_model_server.bodies(OPENAI_CHAT)
        assert "Kernel variables" in prompt_text(first)
        assert "sales: pandas.DataFrame 2×2, columns region" in prompt_text(first)
        assert "revenue float64" in prompt_text(second)
        assert "threshold: int = 7" in prompt_text(second)
        assert tab.cell("c1").get("execution_count") is None  # nothing ran in the notebook
        assert [len(tab.cell(c).get("outputs", [])) for c in ("c0", "c1")] == [0, 0]

    journal = await agent.journal(path)
    calls = [entry for entry in journal if entry["action"] == "tool_call"]
    assert [(entry["details"]["name"], entry["details"]["ok"]) for entry in calls] == [
        ("list_variables", True)
    ]
    assert any(entry["action"] == "variables_read" for entry in journal)


async def test_without_a_kernel_the_tool_says_so(write_notebook, api, loop_model_server):
    path = write_notebook("nokernel.ipynb", "x = 1")
    loop_model_server.script(call_tools(("list_variables", {})), say("No kernel."))
    agent = Agent(api)
    await agent.start(path, "What is x?")
    await agent.ended(path)
    first, second = loop_model_server.bodies(OPENAI_CHAT)
    assert "Kernel variables" not in prompt_text(first)
    assert "has no running kernel" in prompt_text(second)
