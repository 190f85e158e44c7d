"""What the model is sent: masked secrets, a bounded prompt on a big notebook, Ollama's wire."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from agent_helpers import OLLAMA_CHAT, OPENAI_CHAT, notices, openai_config, prompt_text
from loop_helpers import wait_for

from jupyter_loop.notebook_view.notebook_map import estimate_tokens
from jupyter_loop.testing import call_tools, say

CANARY = "canary-7f3a9c2e-secret"
ENV_CANARY = "envcanary-51d0b7a3"


def write_with_outputs(root: Path, name: str, cells: list[tuple[str, list[dict]]]) -> str:
    nb = nbformat.v4.new_notebook()
    for index, (source, outputs) in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source, execution_count=index + 1)
        cell["id"] = f"c{index}"
        cell["outputs"] = [nbformat.from_dict(output) for output in outputs]
        nb.cells.append(cell)
    (root / name).write_text(nbformat.writes(nb), encoding="utf-8")
    return name


def zero_division() -> dict:
    return {
        "output_type": "error",
        "ename": "ZeroDivisionError",
        "evalue": "division by zero",
        "traceback": ["\x1b[31mZeroDivisionError\x1b[0m: division by zero"],
    }


class TestSecrets:
    @pytest.fixture
    def loop_config(self, loop_model_server, monkeypatch):
        monkeypatch.setenv("LOOP_CANARY", CANARY)
        monkeypatch.setenv("LOOP_TEST_TOKEN", ENV_CANARY)
        return openai_config(loop_model_server, secrets=[CANARY], approval_policy="always")

    async def test_a_printed_canary_reaches_no_prompt_and_no_journal(
        self, agent, notebook_in_tab, run_cells, loop_model_server, jp_serverapp
    ):
        source = "import os\nprint(os.environ['LOOP_CANARY'], os.environ['LOOP_TEST_TOKEN'])"
        async with notebook_in_tab("canary.ipynb", source) as (path, tab):
            await run_cells(path, "c0")
            await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        loop_model_server.script(
            call_tools(("read_cell", {"cell_id": "c0"})),
            call_tools(("run_cells", {"cell_ids": ["c0"]})),
            call_tools(("read_cell", {"cell_id": "c0", "output_index": 0})),
            say("Done."),
        )
        await agent.start(path, f"What does it print? (my key is {CANARY})", focus_cell_ids=["c0"])
        conversation = await agent.ended(path)
        assert conversation["turn"]["state"] == "done", notices(conversation)
        bodies = loop_model_server.bodies(OPENAI_CHAT)
        assert len(bodies) == 4
        for body in bodies:
            sent = json.dumps(body)
            assert CANARY not in sent and ENV_CANARY not in sent
        assert "•••••• ••••••" in prompt_text(bodies[1])  # the output was there, masked
        service = jp_serverapp.web_app.settings["jupyter_loop_assistant"].agent
        journal_dir = Path(service.settings.data_dir)
        for file in journal_dir.rglob("*.jsonl"):
            text = file.read_text(encoding="utf-8")
            assert CANARY not in text and ENV_CANARY not in text
        everything = json.dumps([conversation, await agent.journal(path)])
        assert CANARY not in everything and ENV_CANARY not in everything


class TestBudget:
    BUDGET = 6_000
    STEPS = 30

    @pytest.fixture
    def loop_config(self, loop_model_server):
        return openai_config(
            loop_model_server, agent_context_tokens=self.BUDGET, agent_max_steps=self.STEPS + 1
        )

    async def test_prompt_stays_under_budget_over_30_steps_on_1000_cells(
        self, agent, jp_root_dir, loop_model_server
    ):
        cells = []
        for index in range(1_000):
            outputs: list[dict] = []
            if index % 3 == 0:
                text = "".join(f"step {index}.{n} loss=0.{n:04d}\n" for n in range(300))
                outputs = [{"output_type": "stream", "name": "stdout", "text": text}]
            elif index % 50 == 7:
                outputs = [zero_division()]
            cells.append((f"# cell {index}\nresult_{index} = step({index})", outputs))
        path = write_with_outputs(jp_root_dir, "big.ipynb", cells)
        calls = [
            call_tools(("read_cell", {"cell_id": f"c{(step * 37) % 1000}"}))
            for step in range(self.STEPS)
        ]
        loop_model_server.script(*calls, say("Read them all."))
        await agent.start(path, "Summarise the training runs.")
        conversation = await agent.ended(path, timeout=90)
        assert conversation["turn"]["state"] == "done", notices(conversation)
        bodies = loop_model_server.bodies(OPENAI_CHAT)
        assert len(bodies) == self.STEPS + 1
        sizes = [
            sum(
                estimate_tokens((m["content"] or "") + json.dumps(m.get("tool_calls") or "")) + 4
                for m in body["messages"]
            )
            for body in bodies
        ]
        assert max(sizes) <= self.BUDGET, sizes
        # Bounded, not growing: older steps are compacted into receipts every few steps, so
        # the prompt swings within the same bounds once receipts have filled their share.
        assert max(sizes[-10:]) <= max(sizes[10:20]) * 1.05, sizes
        assert "ZeroDivisionError" in prompt_text(bodies[-1])
        assert "c999" in prompt_text(bodies[-1])  # the map keeps the ends


class TestOllama:
    @pytest.fixture
    def loop_config(self, loop_model_server):
        return {
            "agent_provider": "ollama",
            "ollama_host": loop_model_server.ollama_host,
            "ollama_num_ctx": 8192,
            "agent_model": "scripted-tools",
            "agent_request_timeout": 5.0,
            "batch_interval": 0.01,
        }

    async def test_a_turn_through_native_ollama(self, agent, jp_root_dir, loop_model_server, api):
        path = write_with_outputs(
            jp_root_dir, "ollama.ipynb", [("x = 0", []), ("1 / x", [zero_division()])]
        )
        loop_model_server.script(
            call_tools(("read_cell", {"cell_id": "c1"})), say("It divides by zero.")
        )
        await agent.start(path, "Why does it fail?")
        conversation = await agent.ended(path)
        assert conversation["turn"]["state"] == "done", notices(conversation)
        assert conversation["turn"]["provider"] == "ollama"
        bodies = loop_model_server.bodies(OLLAMA_CHAT)
        assert len(bodies) == 2
        assert bodies[0]["options"]["num_ctx"] == 8192
        assert bodies[0]["model"] == "scripted-tools" and bodies[0]["tools"]
        assert "ZeroDivisionError" in prompt_text(bodies[0])
        tool = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
        assert (tool["tool_name"], "ZeroDivisionError" in tool["content"]) == ("read_cell", True)
        assert conversation["messages"][-1]["text"] == "It divides by zero."
        models = await api("api", "jupyter-loop", "agent", "models")
        assert models["provider"] == "ollama" and "scripted-tools" in models["models"]

    async def test_a_model_without_tools_says_so(self, agent, write_notebook, loop_model_server):
        path = write_notebook("plain.ipynb", "1")
        await agent.start(path, "hi", model="scripted-plain")
        conversation = await agent.ended(path)
        assert conversation["turn"]["state"] == "error"
        assert "does not support tools" in notices(conversation)[0]
        assert loop_model_server.bodies(OLLAMA_CHAT) == []
