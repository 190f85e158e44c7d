"""Inline completions: the time the server adds before the model request leaves.

Starts a real Jupyter server with jupyter-loop pointed at the scripted model server (which
answers after a fixed delay per streamed event), on a notebook of 200 cells with large
outputs (250 KB of printed text each, 50 MB in all). Then, as a browser editing cell 150
would, sends completion requests over one kept-alive connection and reads each streamed
answer. For every request it takes the time from sending the request to the scripted
server receiving the model request: the server's whole share (HTTP in, parsing, reading the
neighbouring cells from the live notebook, summarising their outputs, masking, the
``openai`` client building its request) plus two loopback hops. Prints the median and the
95th percentile (goal: at most 30 ms and 60 ms). Run by hand:

    python bench/completion.py
"""

from __future__ import annotations

import asyncio
import http.client
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).parent.parent))

from jupyter_loop.testing import ScriptedModelServer, say  # noqa: E402
from jupyter_loop.testing.server_process import TOKEN, ServerProcess  # noqa: E402

CELLS = 200
EDITED = 150
OUTPUT_BYTES = 250_000
REQUESTS = 100
MODEL_DELAY = 0.02
"""Seconds the scripted model waits before each streamed event."""


def write_notebook(root: Path) -> str:
    line = "epoch {:05d}  loss 0.{:06d}  price_eur_2024 {:8.2f}\n"
    text = "".join(line.format(i, i * 7 % 999_999, i * 0.37) for i in range(5_000))
    text = (text * (OUTPUT_BYTES // len(text) + 1))[:OUTPUT_BYTES]
    nb = nbformat.v4.new_notebook()
    for index in range(CELLS):
        cell = nbformat.v4.new_code_cell(f"train(step={index})\nprint(report())")
        cell["id"] = f"c{index}"
        cell["execution_count"] = index + 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nb.cells.append(cell)
    (root / "big.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
    return "big.ipynb"


def complete(connection: http.client.HTTPConnection, path: str, n: int) -> float:
    """Send one completion request and read its answer; returns when it was sent."""
    body = {
        "path": path,
        "cell_id": f"c{EDITED}",
        "editor_id": "bench:editor",
        "before": f'result_{n} = df["pr',
        "after": "",
    }
    headers = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
    sent = time.monotonic()
    connection.request("POST", "/api/jupyter-loop/completion/stream", json.dumps(body), headers)
    response = connection.getresponse()
    answer = response.read()
    if response.status != 200 or b'"error": null' not in answer:
        raise RuntimeError(f"completion failed: {response.status} {answer!r}")
    return sent


def main() -> None:
    with tempfile.TemporaryDirectory() as home, ScriptedModelServer() as model:
        model.set_default_reply(say('ice_eur_2024"]', delay=MODEL_DELAY))
        server = ServerProcess(
            Path(home),
            "--JupyterLoopApp.agent_provider=openai",
            f"--JupyterLoopApp.openai_base_url={model.openai_base_url}",
            "--JupyterLoopApp.openai_api_key=sk-bench-not-a-key",
            "--JupyterLoopApp.completion_model=scripted-plain",
        )
        server.root.mkdir(parents=True, exist_ok=True)
        path = write_notebook(server.root)
        server.start()
        try:
            asyncio.run(server.ready())
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
            began = time.monotonic()
            complete(connection, path, 0)  # loads the notebook's room
            print(f"notebook: {CELLS} cells, {CELLS * OUTPUT_BYTES / 1e6:.0f} MB of outputs; "
                  f"first request (loads the room) {time.monotonic() - began:.2f} s")  # fmt: skip
            added = []
            for n in range(1, REQUESTS + 1):
                sent = complete(connection, path, n)
                added.append((model.requests[-1].received_at - sent) * 1000)
            connection.close()
        finally:
            server.kill()
    added.sort()
    p95 = added[int(len(added) * 0.95) - 1]
    print(f"{REQUESTS} completions, model delay {MODEL_DELAY * 1000:.0f} ms per streamed event")
    print(f"request sent -> model request received: median {statistics.median(added):.1f} ms, "
          f"p95 {p95:.1f} ms, max {added[-1]:.1f} ms (goal: <= 30 ms, <= 60 ms)")  # fmt: skip


if __name__ == "__main__":
    main()
