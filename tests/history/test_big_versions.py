"""A big version (16 MB) is read off the event loop, and the store stays within its cap on
disk (its database and write-ahead log together)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyter_loop.history.versions.store import VersionStore

VERSIONS = ("api", "jupyter-loop", "versions")


def big_notebook(megabytes: int, salt: str = "") -> bytes:
    """A notebook of many cells with text outputs, ``megabytes`` long, barely compressible."""
    cells = []
    size = 0
    number = 0
    while size < megabytes * 2**20:
        text = os.urandom(3000).hex()
        cells.append({
            "id": f"c{number}", "cell_type": "code", "metadata": {}, "execution_count": 1,
            "source": f"print({number!r}) {salt}",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": text}],
        })  # fmt: skip
        size += len(text) + 200
        number += 1
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(notebook).encode()


class LoopProbe:
    """The longest the event loop went without running a task, while it is watched."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.002)
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now

    def __enter__(self) -> LoopProbe:
        self._task = asyncio.ensure_future(self._watch())
        return self

    def __exit__(self, *_: Any) -> None:
        assert self._task is not None
        self._task.cancel()


@pytest.mark.timeout(180)
async def test_a_big_version_is_read_off_the_event_loop(
    jp_fetch: Any, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    content = big_notebook(16)
    (jp_root_dir / "big.ipynb").write_bytes(content)
    keeper = jp_serverapp.web_app.settings["jupyter_loop_versions"]
    made = await asyncio.to_thread(keeper.store.add, "big.ipynb", content)
    parses, stalls = [], []
    for _ in range(3):  # the least of three: a collection or a busy machine pauses any one
        started = time.monotonic()
        nbformat.reads(content.decode(), as_version=4)  # what reading it costs, here and now
        parses.append(time.monotonic() - started)
        with LoopProbe() as probe:
            big = asyncio.ensure_future(
                jp_fetch(*VERSIONS, str(made.number), params={"path": "big.ipynb"},
                         request_timeout=120)
            )  # fmt: skip
            answered = 0
            while not big.done():  # other requests are answered while the version is read
                await jp_fetch("api", "status")
                answered += 1
            response = await big
        assert response.code == 200 and len(response.body) > 15 * 2**20
        stalls.append(probe.longest)
    stall, parse = min(stalls), min(parses)
    print(f"loop stalled {stall:.3f} s at most; reading alone takes {parse:.3f} s; "
          f"{answered} requests answered meanwhile")  # fmt: skip
    # The loop kept answering: what is left on it is a small share of reading it (on the
    # loop, before, it stalled longer than the reading alone: 1.10 s against 0.62 s).
    assert stall < parse / 2, (stalls, parses)


def on_disk(path: Path) -> int:
    return sum(
        part.stat().st_size
        for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
        if part.exists()
    )


def test_the_store_stays_within_its_cap_on_disk(tmp_path: Path) -> None:
    cap = 4 * 2**20
    store = VersionStore(tmp_path / "versions.sqlite3", max_per_notebook=50, max_bytes=cap)
    try:
        for number in range(6):  # two notebooks, each version ~1.5 MB compressed
            for name in ("a.ipynb", "b.ipynb"):
                store.add(name, big_notebook(3, f"{number}"), now=float(number * 100))
                assert store.bytes_stored() <= cap
                assert on_disk(store.path) <= cap * 1.25, (number, on_disk(store.path))
    finally:
        store.close()
