"""Huge outputs do not hurt: real server, real kernel, real Y clients.

A long stream keeps its head and its tail in the notebook, a huge output becomes a
placeholder, the full output stays on the server; a flood of output keeps the server's
memory bounded; odd text and unknown MIME types still show something.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from loop_helpers import wait_for

from jupyter_loop.execution.outputs.budget import METADATA_KEY

BUDGET = 256 * 1024


@pytest.fixture
def loop_config(request: Any, tmp_path: Path) -> dict[str, Any]:
    return {"data_dir": str(tmp_path / "loop"), **getattr(request, "param", {})}


def ystore_bytes(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "ystore.db") as db:
        (size,) = db.execute("SELECT coalesce(sum(length(yupdate)), 0) FROM yupdates").fetchone()
    return int(size)


def omitted(output: dict[str, Any]) -> dict[str, Any]:
    return output.get("metadata", {}).get(METADATA_KEY, {}).get("omitted", {})


async def test_a_200000_line_loop_keeps_head_and_tail_within_the_budget(
    write_notebook, jp_root_dir, start_kernel, run_cells, open_tab, tmp_path
):
    path = write_notebook("loop.ipynb", "for i in range(200_000):\n    print(i)")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await asyncio.sleep(0.5)
        before = ystore_bytes(tmp_path)
        started = time.monotonic()
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1, timeout=60)
        elapsed = time.monotonic() - started
        head, marker, tail = tab.cell("c0")["outputs"]
        await asyncio.sleep(1.0)  # the YStore is written in the background
        growth = ystore_bytes(tmp_path) - before
    assert head["text"].startswith("0\n1\n2\n") and head["text"].endswith("\n")
    assert tail["text"].endswith("199998\n199999\n")
    lines = head["text"].count("\n") + tail["text"].count("\n") + omitted(marker)["lines"]
    assert lines == 200_000
    document = len(json.dumps([head, marker, tail]))
    assert document < BUDGET
    saved = await wait_for(lambda: (jp_root_dir / path).stat().st_size < BUDGET)
    assert saved
    # At most the head, one tail, and one rewrite of the tail per second of the run.
    assert growth < BUDGET * (2 + elapsed), (growth, elapsed)
    print(f"200,000 lines: {elapsed:.2f} s, document {document} B, YStore +{growth} B")


async def test_a_huge_image_and_a_huge_page_become_placeholders(
    write_notebook, start_kernel, run_cells, open_tab, jp_fetch, jp_base_url
):
    source = (
        "import base64\n"
        "from IPython.display import HTML, display\n"
        "png = b'\\x89PNG\\r\\n\\x1a\\n' + bytes(range(256)) * (30 * 4096)\n"
        "display({'image/png': base64.b64encode(png).decode(), 'text/plain': '<big>'}, raw=True)\n"
        "display(HTML('<p>' + 'page ' * 1_000_000 + '</p>'))"
    )
    path = write_notebook("huge.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1, timeout=60)
        image, page = tab.cell("c0")["outputs"]
    assert set(image["data"]) == {"text/plain", "text/html"}
    assert image["data"]["text/plain"].startswith("<big>\n[image/png, text/plain output of 40.0")
    assert set(page["data"]) == {"text/plain", "text/html"}
    assert len(json.dumps([image, page])) < 4096
    link = image["metadata"][METADATA_KEY]["full_output"]
    assert f'<a href="{link}" target="_blank">' in image["data"]["text/html"]
    response = await jp_fetch(*link[len(jp_base_url) :].split("/"))
    assert response.headers["Content-Type"] == "image/png"
    assert response.body == b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (30 * 4096)
    link = page["metadata"][METADATA_KEY]["full_output"]
    response = await jp_fetch(*link[len(jp_base_url) :].split("/"))
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert response.headers["Content-Security-Policy"].startswith("sandbox;")
    assert response.body.count(b"page ") == 1_000_000


async def test_a_flood_of_output_keeps_memory_bounded_and_loses_nothing_received(
    write_notebook, start_kernel, run_cells, open_tab, read_notebook, jp_fetch, jp_base_url
):
    source = (
        "import sys, time\n"
        "end = time.time() + 5\n"
        "i = 0\n"
        "while time.time() < end:\n"
        "    sys.stdout.write(f'{i} ' + 'x' * 300 + '\\n')\n"
        "    sys.stdout.flush()\n"  # a message per line: as many messages as it can
        "    i += 1\n"
        "print('last', i)"
    )
    path = write_notebook("flood.ipynb", source)
    await start_kernel(path)
    server = psutil.Process()
    gc.collect()
    baseline = peak = server.memory_info().rss
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        # The document shows the flood while it runs (the writer is not starved).
        await wait_for(lambda: tab.text("c0").startswith("0 x"), timeout=10)
        assert tab.cell("c0").get("execution_count") is None
        while tab.cell("c0").get("execution_count") != 1:
            peak = max(peak, server.memory_info().rss)
            await asyncio.sleep(0.05)
        head, marker, tail = tab.cell("c0")["outputs"]
    assert peak - baseline < 150 * 1024 * 1024, (peak - baseline) / 2**20
    assert head["text"].startswith("0 " + "x" * 300 + "\n1 ")
    # ZeroMQ may drop messages of a kernel that outpaces the server (as for any Jupyter
    # client); whatever the server received is in the notebook or in the full output.
    link = marker["metadata"][METADATA_KEY]["full_output"]
    full = (await jp_fetch(*link[len(jp_base_url) :].split("/"))).body.decode()
    received = full.count("\n")
    shown = head["text"].count("\n") + tail["text"].count("\n")
    assert omitted(marker)["lines"] + shown == received > 2_000  # far beyond the budget
    assert full.startswith(head["text"]) and full.endswith(tail["text"])

    def saved_head() -> str | None:
        notebook = read_notebook(path)
        outputs = notebook.cells[0].outputs if notebook else []
        return outputs[0]["text"] if outputs else None

    await wait_for(lambda: saved_head() == head["text"])  # what was written is kept
    print(f"flood: {received} lines received, RSS +{(peak - baseline) / 2**20:.0f} MB")


async def test_odd_text_shows_something_sensible(
    write_notebook, start_kernel, run_cells, open_tab, read_notebook
):
    source = (
        "import sys\n"
        "print('emoji ' + '😀👍🏽🇫🇷' * 2000)\n"
        "print('lone \\udcff surrogate')\n"
        "print(b'raw \\xff\\xfe bytes'.decode('utf-8', 'surrogateescape'))\n"  # not UTF-8
        "print('still here')"
    )
    path = write_notebook("odd.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: "still here" in tab.text("c0"), timeout=30)
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        text = tab.text("c0")
    assert ("😀👍🏽🇫🇷" * 2000) in text
    assert "lone \ufffd surrogate" in text
    assert "raw \ufffd\ufffd bytes" in text

    def saved_text() -> str | None:
        notebook = read_notebook(path)
        return "".join(o.get("text", "") for o in notebook.cells[0].outputs) if notebook else None

    await wait_for(lambda: saved_text() == text)


async def test_an_unknown_mime_type_shows_a_line_of_text(
    write_notebook, start_kernel, run_cells, open_tab
):
    source = (
        "display({'application/x-never-heard-of': 'abc'}, raw=True)\n"
        "display({'application/vnd.odd+json': {'a': [1, 2]}}, raw=True)"
    )
    path = write_notebook("mime.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        first, second = tab.cell("c0")["outputs"]
    assert first["data"]["application/x-never-heard-of"] == "abc"
    assert first["data"]["text/plain"] == "<application/x-never-heard-of output, 3 bytes>"
    assert second["data"]["application/vnd.odd+json"] == {"a": [1, 2]}
    assert second["data"]["text/plain"].startswith("<application/vnd.odd+json output")
