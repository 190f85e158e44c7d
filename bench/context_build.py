"""How long building the model's context takes on a big notebook, and whether it stays flat.

Builds a 1,000-cell notebook holding about 100 MB of outputs (long streams with ANSI colours and
progress bars, tracebacks, pandas-style HTML tables, base64 PNGs), then simulates 30 agent steps
(tool steps and working memory grow; the cells touched move) and prints the build time, the
prompt's token estimate per step and the prefix share: the fraction of each request's bytes
(OpenAI wire format) that begins the next request too. Run by hand:

    python bench/context_build.py
"""

from __future__ import annotations

import base64
import json
import os
import random
import statistics
import struct
import time
import zlib
from typing import Any

from jupyter_loop.agent.context import (
    CellSnapshot,
    ContextWindow,
    ConversationMessage,
    ToolResult,
    ToolStep,
    TurnOverview,
    build_context,
)
from jupyter_loop.notebook_view.summary import summarize_outputs
from jupyter_loop.providers import ChatMessage, ToolCall
from jupyter_loop.providers.openai_wire import to_openai_messages

CELLS = 1_000
STEPS = 30
BUDGET_TOKENS = 16_000


def _png(width: int, height: int, padding: int) -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", bytes(padding))
    return base64.b64encode(body + chunk(b"IEND", b"")).decode()


def _stream(index: int, size: int) -> dict[str, Any]:
    line = f"\x1b[32mepoch {index}\x1b[0m step {{}} loss=0.{index:04d} " + "." * 40 + "\n"
    progress = "".join(f"\r{p}%|{'#' * (p // 10)}" for p in range(0, 101, 10)) + "\n"
    block = "".join(line.format(n) for n in range(100)) + progress
    return {"output_type": "stream", "name": "stdout", "text": block * (size // len(block))}


def _table(rows: int) -> dict[str, Any]:
    head = "<tr><th></th>" + "".join(f"<th>col{c}</th>" for c in range(12)) + "</tr>"
    body = "".join(
        f"<tr><th>{r}</th>" + "".join(f"<td>{r * c}.5</td>" for c in range(12)) + "</tr>\n"
        for r in range(rows)
    )
    html = (
        f'<table class="dataframe"><thead>{head}</thead><tbody>{body}</tbody></table>'
        f"<p>{rows} rows × 12 columns</p>"
    )
    return {
        "output_type": "execute_result",
        "execution_count": 1,
        "data": {"text/html": html, "text/plain": f"[{rows} rows x 12 columns]"},
        "metadata": {},
    }


def _error(index: int) -> dict[str, Any]:
    return {
        "output_type": "error",
        "ename": "KeyError",
        "evalue": f"'column_{index}'",
        "traceback": [
            "\x1b[31m" + "-" * 75 + "\x1b[39m",
            "\x1b[31mKeyError\x1b[39m          Traceback (most recent call last)",
            f"\x1b[36mCell In[{index}], line 2\x1b[39m\n      1 df = load()\n"
            f"\x1b[32m----> 2\x1b[39m df['column_{index}']\n",
            "\x1b[36mFile /opt/conda/lib/python3.11/site-packages/pandas/core/frame.py:3761"
            "\x1b[39m, in DataFrame.__getitem__(self, key)\n-> 3761 indexer = self.columns...\n",
            f"\x1b[31mKeyError\x1b[39m: 'column_{index}'",
        ],
    }


def make_notebook(seed: int = 1) -> list[CellSnapshot]:
    """1,000 cells with about 100 MB of outputs."""
    rng = random.Random(seed)
    png = _png(800, 600, 150_000)
    cells: list[CellSnapshot] = []
    for index in range(CELLS):
        kind = index % 10
        outputs: list[dict[str, Any]] = []
        if kind in (0, 1, 2):
            outputs = [_stream(index, rng.randint(150_000, 250_000))]
        elif kind == 3:
            outputs = [_stream(index, 2_000), _error(index)]
        elif kind in (4, 5):
            outputs = [_table(rng.randint(300, 700))]
        elif kind in (6, 7):
            outputs = [{"output_type": "display_data", "data": {"image/png": png}, "metadata": {}}]
        if kind == 9:
            cells.append(CellSnapshot(f"md-{index:04d}", "markdown", f"## Section {index}\ntext"))
            continue
        source = f"# step {index}\nresult_{index} = run({index})\nshow(result_{index})"
        cells.append(CellSnapshot(f"cell-{index:04d}", "code", source, index + 1, "idle", outputs))
    return cells


def output_megabytes(cells: list[CellSnapshot]) -> float:
    total = 0
    for cell in cells:
        for output in cell.outputs:
            total += len(output.get("text", ""))
            total += sum(len(value) for value in output.get("data", {}).values())
            total += sum(len(line) for line in output.get("traceback", []))
    return total / 1e6


def request_bytes(window: ContextWindow) -> str:
    """The request's messages as the OpenAI wire carries them."""
    messages = [ChatMessage("system", window.system)]
    messages.extend(
        ChatMessage(m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_name)
        for m in window.messages
    )
    return json.dumps(to_openai_messages(messages), ensure_ascii=False)


def prefix_shares(requests: list[str]) -> list[float]:
    """For each request but the last: the share of its bytes that begins the next one."""
    return [
        len(os.path.commonprefix([first, second])) / len(first)
        for first, second in zip(requests, requests[1:], strict=False)
    ]


def tool_step(step: int, cell_id: str, content: str, said: str) -> ToolStep:
    """A step that read one cell."""
    call = ToolCall(f"call_{step}", "read_cell", json.dumps({"cell_id": cell_id}))
    result = ToolResult("read_cell", call.arguments_json, content, True, call.id)
    return ToolStep(said, (call,), (result,))


def main() -> None:
    started = time.perf_counter()
    cells = make_notebook()
    print(f"notebook: {len(cells)} cells, {output_megabytes(cells):.0f} MB of outputs "
          f"(made in {time.perf_counter() - started:.1f} s)")  # fmt: skip
    rng = random.Random(2)
    conversation = [ConversationMessage("user", "Why does the training loop fail? Fix it.")]
    steps: list[ToolStep] = []
    memory: list[str] = []
    touched: list[str] = []
    overview: TurnOverview | None = None
    times: list[float] = []
    tokens: list[int] = []
    requests: list[str] = []
    for step in range(STEPS):
        began = time.perf_counter()
        window = build_context(
            cells,
            conversation=conversation,
            steps=steps,
            focus_ids=touched[:4],
            memory=memory,
            budget_tokens=BUDGET_TOKENS,
            nonce="bench",
            overview=overview,
        )
        times.append((time.perf_counter() - began) * 1000)
        overview = window.overview
        tokens.append(window.tokens)
        requests.append(request_bytes(window))
        target = rng.randrange(0, CELLS, 10)  # a long stream
        content = summarize_outputs(cells[target].outputs, 200_000).text
        said = f"Step {step}: reading more. " * 20
        steps.append(tool_step(step, cells[target].id, content, said))
        touched.insert(0, cells[target].id)
        memory.append(f"step {step}: cell {cells[target].id} looked at; " + "detail " * 15)
    shares = prefix_shares(requests)
    print(f"build time per step: median {statistics.median(times):.1f} ms, "
          f"max {max(times):.1f} ms (budget {BUDGET_TOKENS} tokens)")  # fmt: skip
    print("prompt tokens per step:", " ".join(str(count) for count in tokens))
    print(f"tokens: min {min(tokens)}, max {max(tokens)}, last {tokens[-1]}")
    print("prefix share per step:", " ".join(f"{share:.0%}" for share in shares))
    print(f"prefix share: mean {statistics.mean(shares):.0%}, min {min(shares):.0%} (goal ≥ 70%)")


if __name__ == "__main__":
    main()
