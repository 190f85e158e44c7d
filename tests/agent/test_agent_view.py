"""What the model sees without being pointed at a cell: printed output and the active cell."""

from __future__ import annotations

import pytest
from agent_helpers import OPENAI_CHAT, notices
from test_agent_prompts import write_with_outputs, zero_division
from tornado.httpclient import HTTPClientError

from jupyter_loop.testing import say


def _notebook(root) -> str:
    printed = "".join(f"epoch {n} accuracy={n / 40:.3f}\n" for n in range(40))
    cells: list[tuple[str, list[dict]]] = [(f"step_{i}()", []) for i in range(30)]
    cells[4] = ("train()", [{"output_type": "stream", "name": "stdout", "text": printed}])
    cells[12] = ("report = summarise(results)\nprint(report)", [])
    cells[20] = ("1 / 0", [zero_division()])
    return write_with_outputs(root, "view.ipynb", cells)


async def test_without_focus_the_first_request_shows_printed_output_and_the_active_cell(
    agent, jp_root_dir, loop_model_server
):
    path = _notebook(jp_root_dir)
    loop_model_server.script(say("Accuracy rose to 0.975."))
    await agent.start(path, "How did training go?", active_cell_id="c12")
    conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "done", notices(conversation)
    first = loop_model_server.bodies(OPENAI_CHAT)[0]["messages"]
    overview = next(m["content"] for m in first if m["content"].startswith("Notebook when"))
    # The printed text of cell 5, head and tail, though no cell was pointed at.
    assert "5 c4 code [5] train() → stdout 40 lines\n    | epoch 0 accuracy=0.000" in overview
    assert "    | epoch 39 accuracy=0.975" in overview
    # In full: the active cell (13), the cell with an error (21), the last cells run.
    in_full = overview.split("## Cells in full")[1]
    assert "cell 13 c12 code [13]\nsource:\nreport = summarise(results)\nprint(report)" in in_full
    assert "cell 21 c20 code [21]" in in_full and "ZeroDivisionError" in in_full


async def test_an_active_cell_that_is_not_an_id_is_refused(agent, write_notebook):
    path = write_notebook("nb.ipynb", "1")
    with pytest.raises(HTTPClientError) as refused:
        await agent.start(path, "hi", active_cell_id=7)
    assert refused.value.code == 400
    assert "'active_cell_id' must be a non-empty string" in refused.value.response.body.decode()
