"""Opening a big notebook's room: jupyter-loop reads its cells in one pass, never one by one.

pycrdt reads an element of a shared array by walking the array from its start
(``Array[i]`` costs O(i), and iterating an array reads each element by index), so any
cell-by-cell read of a live notebook (``YNotebook.get``, ``for ycell in ycells``) costs
O(N²) in its number of cells: about 5 minutes of a blocked event loop at 100,000 cells,
in a room that did not finish opening in 400 s (``bench/big_notebook.py``,
``docs/upstream/cells-read-one-by-one.md``). jupyter-collaboration's own load does it too;
what jupyter-loop adds on a room's load must not.

The measure is a count, not a time: the cells array's elements read by index in the
server's rooms while jupyter-loop's code is on the stack, as a room opens from its file
and again from the store.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import nbformat
import pytest
from loop_helpers import notebook_json, type_in, wait_for
from pycrdt import Array
from traitlets.config import Config

from jupyter_loop.cli.connection import Api, Server
from jupyter_loop.testing.server_process import TOKEN, ServerProcess

CELLS = 150
CLEANUP_DELAY = 0.2
OURS = str(Path(__file__).parents[2] / "jupyter_loop")
TESTS = str(Path(__file__).parents[1])


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.YDocExtension.document_save_delay = 0.3
    jp_server_config.YDocExtension.document_cleanup_delay = CLEANUP_DELAY
    return jp_server_config


class IndexedReads:
    """Elements of shared arrays read by index (``pycrdt.Array.__getitem__``) while a
    frame of jupyter-loop's package is on the stack, by the caller of ours nearest to it
    (a tab of the test, a Y client in this process, is told apart by its document)."""

    def __init__(self) -> None:
        self.by_caller: dict[str, int] = {}
        self.docs: dict[str, set[int]] = {}

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code is not Array.__getitem__.__code__:
            return
        array = frame.f_locals.get("self")
        caller = frame.f_back
        while caller is not None:
            name = caller.f_code.co_filename
            if name.startswith(OURS):
                where = f"{name[len(OURS) + 1 :]}:{caller.f_code.co_name}"
                self.by_caller[where] = self.by_caller.get(where, 0) + 1
                self.docs.setdefault(where, set()).add(id(getattr(array, "doc", None)))
                return
            if name.startswith(TESTS):
                return
            caller = caller.f_back

    def of_server(self, *client_docs: Any) -> dict[str, int]:
        clients = {id(doc) for doc in client_docs}
        return {w: n for w, n in self.by_caller.items() if not self.docs[w] <= clients}


@contextmanager
def counting_reads() -> Iterator[IndexedReads]:
    reads = IndexedReads()
    previous = sys.getprofile()
    sys.setprofile(reads)
    try:
        yield reads
    finally:
        sys.setprofile(previous)


@pytest.mark.timeout(120)
async def test_opening_a_room_reads_its_cells_in_one_pass(jp_root_dir: Path, open_tab: Any) -> None:
    path = "big.ipynb"
    (jp_root_dir / path).write_text(notebook_json(*["x = 1"] * CELLS), encoding="utf-8")

    with counting_reads() as first_open:
        async with open_tab(path) as tab:
            await wait_for(lambda: len(tab.notebook.ycells) == CELLS)
            await asyncio.sleep(1)  # what the room's load starts has run
            client = tab.notebook.ydoc
            type_in(tab, "c0", "\n# typed")  # a save records the file's hash in the store
            await asyncio.sleep(1.5)
    await asyncio.sleep(CLEANUP_DELAY + 1)  # the room is freed

    with counting_reads() as store_open:
        async with open_tab(path) as again:
            await wait_for(lambda: len(again.notebook.ycells) == CELLS)
            await asyncio.sleep(1)
            reopened = again.notebook.ydoc

    assert first_open.of_server(client) == {}, (
        f"jupyter-loop read the cells of a {CELLS}-cell notebook one by one as its room "
        f"opened from its file (each read walks the cells before it): {first_open.by_caller}"
    )
    assert store_open.of_server(reopened) == {}, (
        f"… and as it opened from the store: {store_open.by_caller}"
    )


@pytest.mark.timeout(120)
async def test_the_terminal_client_opens_a_notebook_bigger_than_a_websocket_message(
    tmp_path: Path,
) -> None:
    """A room sends a joining client the whole notebook in one message: 15 MB at 40,000
    one-line cells, beyond tornado's default 10 MiB for a websocket client's message
    (the connection was closed, and ``jupyter loop`` waited for a notebook until its
    timeout)."""
    server = ServerProcess(tmp_path)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('x' * 12_000_000)", id="c0")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 12_000_000)]
    nb.cells.append(cell)
    server.root.mkdir(parents=True)
    (server.root / "huge.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
    server.start()
    try:
        await server.ready()
        # (Before: "The server never sent the notebook's shared document." after 30 s.)
        async with Api(Server(server.url(), TOKEN)).room("huge.ipynb") as notebook:
            (output,) = notebook.ycells[0]["outputs"].to_py()
            text = output["text"]
            assert len("".join(text) if isinstance(text, list) else text) == 12_000_000
    finally:
        server.kill()
