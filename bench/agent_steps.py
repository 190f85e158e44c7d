"""The agent's per-step cost on a big live notebook: context build time and prompt tokens.

Loads a 1,000-cell notebook holding about 100 MB of outputs (see ``context_build.py``) into a
live shared document (a ``YNotebook``, as the server holds it), then plays a 30-step turn the
way :class:`jupyter_loop.agent.turn.Turn` does: at every step the cells are read from the
live document (:class:`~jupyter_loop.notebook_view.snapshot.NotebookSnapshots`, which re-reads only
the cells that changed) and the context is built within the budget; between steps a cell is
re-run (its outputs rewritten in the document) and a tool step is added. Prints the time
per step (read + build), the prompt's token estimate per step, and the prefix share: the
fraction of each request's bytes that begins the next request of the turn (what a model
server's prefix cache reuses). Run by hand:

    python bench/agent_steps.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from jupyter_ydoc import YNotebook
from pycrdt import Map, Text

sys.path.insert(0, str(Path(__file__).parent))

from context_build import (  # noqa: E402
    CELLS,
    make_notebook,
    output_megabytes,
    prefix_shares,
    request_bytes,
    tool_step,
)

from jupyter_loop.agent.context import (  # noqa: E402
    RESULT_SHARE,
    ConversationMessage,
    ToolStep,
    TurnOverview,
    build_context,
)
from jupyter_loop.notebook_view.snapshot import NotebookSnapshots  # noqa: E402
from jupyter_loop.notebook_view.summary import summarize_outputs  # noqa: E402
from jupyter_loop.secrets import SecretMasker  # noqa: E402

STEPS = 30
BUDGET_TOKENS = 16_000


def live_notebook() -> YNotebook:
    notebook = YNotebook()
    with notebook.ydoc.transaction():
        for cell in make_notebook():
            value = {"id": cell.id, "cell_type": cell.cell_type, "source": cell.source}
            value["metadata"] = {}
            if cell.cell_type == "code":
                value["outputs"] = [dict(output) for output in cell.outputs]
                value["execution_count"] = cell.execution_count
            notebook.append_cell(value)
    return notebook


def rerun(notebook: YNotebook, index: int, step: int) -> None:
    """What a run does to a cell: outputs cleared, a stream written, a new count."""
    with notebook.ydoc.transaction():
        ycell = notebook.ycells[index]
        if ycell.get("cell_type") != "code":
            return
        outputs = ycell["outputs"]
        outputs.clear()
        text = "".join(f"rerun {step} line {n}\n" for n in range(2_000))
        outputs.append(Map({"output_type": "stream", "name": "stdout", "text": Text(text)}))
        ycell["execution_count"] = 2_000 + step


def main() -> None:
    began = time.perf_counter()
    notebook = live_notebook()
    masker = SecretMasker(["not-a-real-secret-123"], environ={})
    cells = NotebookSnapshots(masker)  # masks each cell as it reads it
    print(f"live notebook: {CELLS} cells, {output_megabytes(make_notebook()):.0f} MB of outputs "
          f"(loaded in {time.perf_counter() - began:.1f} s)")  # fmt: skip
    rng = random.Random(3)
    conversation = [ConversationMessage("user", "Why does the training loop fail? Fix it.")]
    steps: list[ToolStep] = []
    touched: list[str] = []
    overview: TurnOverview | None = None
    times: list[float] = []
    tokens: list[int] = []
    reread: list[int] = []
    requests: list[str] = []
    result_chars = int(BUDGET_TOKENS * 4 * RESULT_SHARE) - 300
    for step in range(STEPS):
        started = time.perf_counter()
        snapshot = cells.cells(notebook)
        window = build_context(
            snapshot,
            conversation=conversation,
            steps=steps,
            focus_ids=touched[:4],
            memory=[f"proposal p-{n} (modify c{n}): pending" for n in range(step // 5)],
            budget_tokens=BUDGET_TOKENS,
            nonce="bench",
            overview=overview,
        )
        times.append((time.perf_counter() - started) * 1000)
        overview = window.overview
        tokens.append(window.tokens)
        reread.append(cells.reread)
        requests.append(request_bytes(window))
        # The step's tool call: read a big cell, or re-run one (a document change).
        target = rng.randrange(0, CELLS, 10)
        if step % 3 == 2:
            rerun(notebook, target + 1, step)
        content = summarize_outputs(snapshot[target].outputs, result_chars).text
        said = f"Step {step}: reading more. " * 10
        steps.append(tool_step(step, snapshot[target].id, content, said))
        touched.insert(0, snapshot[target].id)
    cells.close()
    warm = times[1:]
    shares = prefix_shares(requests)
    print(f"first step (reads every cell): {times[0]:.0f} ms")
    print(f"later steps: median {statistics.median(warm):.1f} ms, max {max(warm):.1f} ms "
          f"(goal ≤ 50 ms; cells re-read per step: {reread[1:]})")  # fmt: skip
    print("prompt tokens per step:", " ".join(str(count) for count in tokens))
    print(f"tokens: min {min(tokens)}, max {max(tokens)}, last {tokens[-1]} "
          f"(budget {BUDGET_TOKENS})")  # fmt: skip
    print("prefix share per step:", " ".join(f"{share:.0%}" for share in shares))
    print(f"prefix share: mean {statistics.mean(shares):.0%}, min {min(shares):.0%} "
          "(goal ≥ 70%)")  # fmt: skip


if __name__ == "__main__":
    main()
