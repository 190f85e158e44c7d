"""A tab that typed offline while its notebook's file was replaced (the "laptop lid" with a
``git checkout`` meanwhile; chaos defect d).

The room was freed while the tab was away, and built again from the replaced file: a
history the tab never saw. Merged, the tab's lines landed beside the checked-out code (or
vanished under the room's reload, depending on which came first). The file came last, so
the notebook shows the file; the lines typed offline are kept as a proposal on their cell,
for the person to take or leave. A tab offline while nothing replaced the file merges as
Yjs always does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import tab_proposals
from jupyter_ydoc import YNotebook
from loop_helpers import notebook_json, source_on_disk, type_in, wait_for
from pycrdt import Doc
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from traitlets.config import Config
from yclient import open_tab_factory

from jupyter_loop.testing.server_process import TOKEN, ServerProcess
from jupyter_loop.testing.yjs import disagreements, read_with_yjs

CLEANUP_DELAY = 0.2


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.YDocExtension.document_save_delay = 0.5
    jp_server_config.YDocExtension.document_cleanup_delay = CLEANUP_DELAY
    jp_server_config.YDocExtension.file_poll_interval = 0.5
    return jp_server_config


async def offline_with_a_line(open_tab: Any, target: Path) -> YNotebook:
    """A tab opens the notebook, loses its connection, and types a line in c0 offline."""
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    async with open_tab(target.name) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2)
        await asyncio.sleep(1.5)  # the room's load has settled and been saved
        kept = tab.notebook
    type_in(tab, "c0", "\n# typed offline")
    return kept


def pending_proposals(tab: Any) -> list[dict[str, Any]]:
    return [p for p in tab_proposals(tab).values() if p.get("status") == "pending"]


def assert_yjs_agrees(tab: Any) -> None:
    (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
    assert disagreements(tab.notebook.ydoc, seen) == []


@pytest.mark.timeout(90)
async def test_lines_typed_offline_while_the_file_was_replaced_are_a_proposal(
    jp_root_dir: Path, open_tab: Any
) -> None:
    target = jp_root_dir / "lid.ipynb"
    kept = await offline_with_a_line(open_tab, target)
    await asyncio.sleep(CLEANUP_DELAY + 1)  # the room is freed
    target.write_text(notebook_json("checked = 'out'", "y = 1"), encoding="utf-8")

    async with open_tab(target.name, notebook=kept) as back:
        (proposal,) = await wait_for(lambda: pending_proposals(back))
        await asyncio.sleep(0.5)  # whatever the room still does reaches the tab
        assert back.cell("c0")["source"] == "checked = 'out'"
        assert proposal["cell_id"] == "c0"
        assert proposal["new_source"] == "x = 1\n# typed offline"
        assert proposal["base_source"] == "checked = 'out'"
        assert_yjs_agrees(back)
        async with open_tab(target.name) as fresh:
            await wait_for(lambda: len(fresh.notebook.ycells) == 2)
            assert fresh.cell("c0")["source"] == "checked = 'out'"
            assert [p["id"] for p in pending_proposals(fresh)] == [proposal["id"]]
            assert_yjs_agrees(fresh)
    await wait_for(lambda: source_on_disk(target, 0) == "checked = 'out'", timeout=10)


@pytest.mark.timeout(90)
async def test_lines_typed_offline_while_the_room_reloaded_the_file_are_a_proposal(
    jp_root_dir: Path, open_tab: Any
) -> None:
    """The room stays open (another tab) and reloads the replaced file while one is away."""
    target = jp_root_dir / "open.ipynb"
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    async with open_tab(target.name) as stays:
        await wait_for(lambda: len(stays.notebook.ycells) == 2)
        kept = await offline_with_a_line(open_tab, target)
        target.write_text(notebook_json("checked = 'out'", "y = 1"), encoding="utf-8")
        await wait_for(lambda: stays.cell("c0")["source"] == "checked = 'out'", timeout=10)

        async with open_tab(target.name, notebook=kept) as back:
            (proposal,) = await wait_for(lambda: pending_proposals(back))
            await asyncio.sleep(0.5)
            assert back.cell("c0")["source"] == "checked = 'out'"
            assert stays.cell("c0")["source"] == "checked = 'out'"
            assert proposal["new_source"] == "x = 1\n# typed offline"
            assert_yjs_agrees(back)


@pytest.mark.timeout(90)
async def test_lines_typed_offline_merge_when_the_file_stayed(
    jp_root_dir: Path, open_tab: Any
) -> None:
    target = jp_root_dir / "stayed.ipynb"
    kept = await offline_with_a_line(open_tab, target)
    await asyncio.sleep(CLEANUP_DELAY + 1)  # the room is freed; the file is not touched

    async with open_tab(target.name, notebook=kept) as back:
        await asyncio.sleep(1.0)  # whatever the room does on loading has reached the tab
        assert back.cell("c0")["source"] == "x = 1\n# typed offline"
        assert pending_proposals(back) == []
        assert_yjs_agrees(back)
        async with open_tab(target.name) as fresh:
            await wait_for(lambda: len(fresh.notebook.ycells) == 2)
            assert fresh.cell("c0")["source"] == "x = 1\n# typed offline"
    await wait_for(lambda: source_on_disk(target, 0) == "x = 1\n# typed offline", timeout=10)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path, "--YDocExtension.file_poll_interval=0.5")
    yield process
    process.kill()


async def started(server: ServerProcess) -> Any:
    """Start the server; its ``open_tab``."""
    server.start()
    await server.ready()
    return tabs_of(server)


def tabs_of(server: ServerProcess) -> Any:
    """``open_tab`` for a server process (a tab's session request, then its room)."""

    async def fetch(*parts: str, method: str = "GET", body: Any = None) -> Any:
        headers = {"Authorization": f"token {TOKEN}"}
        request = HTTPRequest(server.url(*parts), method=method, body=body, headers=headers)
        return await AsyncHTTPClient().fetch(request)

    base = f"ws://127.0.0.1:{server.port}{server.base_url}"
    return open_tab_factory(fetch, base, {"Authorization": f"token {TOKEN}"})


@pytest.mark.timeout(150)
async def test_lines_typed_offline_across_a_server_restart_are_a_proposal(
    server: ServerProcess,
) -> None:
    """The room reloaded the replaced file while the tab was away, and the server restarted
    before it came back (a laptop closed over a ``git pull`` and a server upgrade)."""
    target = server.root / "restarted.ipynb"
    server.root.mkdir(parents=True)
    target.write_text(notebook_json("x = 1", "y = 1"), encoding="utf-8")
    open_tab = await started(server)
    async with open_tab(target.name) as stays:
        await wait_for(lambda: len(stays.notebook.ycells) == 2)
        kept = await offline_with_a_line(open_tab, target)
        target.write_text(notebook_json("checked = 'out'", "y = 1"), encoding="utf-8")
        await wait_for(lambda: stays.cell("c0")["source"] == "checked = 'out'", timeout=10)
        await asyncio.sleep(1.5)  # saved, and in the store
    server.stop()

    open_tab = await started(server)
    async with open_tab(target.name, notebook=kept) as back:
        (proposal,) = await wait_for(lambda: pending_proposals(back))
        await asyncio.sleep(0.5)
        assert back.cell("c0")["source"] == "checked = 'out'"
        assert proposal["new_source"] == "x = 1\n# typed offline"
        assert_yjs_agrees(back)
    await wait_for(lambda: source_on_disk(target, 0) == "checked = 'out'", timeout=10)


def with_output(sources: tuple[str, str], text: str) -> str:
    """A notebook of two cells whose second shows ``text`` as printed output."""
    notebook = json.loads(notebook_json(*sources))
    notebook["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
    return json.dumps(notebook)


@asynccontextmanager
async def away_over_a_rebuild(
    open_tab: Any, target: Path, notebook: YNotebook | None = None
) -> AsyncIterator[tuple[Any, YNotebook]]:
    """One tab stays open; another (holding ``notebook``) types a line in c1 offline while
    a checkout changes c0's code and c1's printed output only, which has the reload
    rebuild c1. The tab that stayed, and the notebook the other kept."""
    target.write_text(with_output(("x = 1", "y = 1"), "from the room\n"), encoding="utf-8")
    async with open_tab(target.name) as stays:
        await wait_for(lambda: len(stays.notebook.ycells) == 2)
        async with open_tab(target.name, notebook=notebook) as away:
            await wait_for(lambda: len(away.notebook.ycells) == 2)
            await asyncio.sleep(1.5)  # the room's load has settled
            kept = away.notebook
        type_in(away, "c1", "\n# typed offline")
        target.write_text(with_output(("checked = 'out'", "y = 1"), "from the file\n"))
        await wait_for(lambda: stays.cell("c0")["source"] == "checked = 'out'", timeout=10)
        yield stays, kept


@pytest.mark.timeout(90)
async def test_lines_typed_offline_merge_into_a_cell_the_reload_rebuilt(
    jp_root_dir: Path, open_tab: Any
) -> None:
    """The checkout kept the cell's code but not its printed output: jupyter_ydoc rebuilds
    such a cell (a new shared map, the same id and source), and the tab's lines merged into
    the one it replaced, which no notebook shows (chaos seed 2033, trials 267 and 679). The
    code did not change, so the lines merge."""
    target = jp_root_dir / "rebuilt.ipynb"
    async with away_over_a_rebuild(open_tab, target) as (stays, kept):
        assert stays.text("c1") == "from the file\n"  # the cell was rebuilt from the file
        async with open_tab(target.name, notebook=kept) as back:
            await wait_for(lambda: back.cell("c1")["source"] == "y = 1\n# typed offline")
            await asyncio.sleep(0.5)
            assert back.cell("c0")["source"] == "checked = 'out'"
            assert stays.cell("c1")["source"] == "y = 1\n# typed offline"
            assert pending_proposals(back) == []
            assert_yjs_agrees(back)
    await wait_for(lambda: source_on_disk(target, 1) == "y = 1\n# typed offline", timeout=10)


@pytest.mark.timeout(90)
async def test_a_line_typed_as_soon_as_the_tab_is_back_comes_after_its_offline_line(
    jp_root_dir: Path, open_tab: Any
) -> None:
    """The cell the reload rebuilt gets the tab's offline line made again by the room. A
    tab that types its next line the moment it is back (synced) typed it after the offline
    one, so it must come after it. When the room answered the tab before making the line
    again, the two were concurrent inserts at the cell's end, which Y orders by client id:
    a tab with a lower id than the room's got them swapped (chaos seed 2042, trial 988).
    The tab here has the lowest id there is, so that order is the one a race would give."""
    target = jp_root_dir / "next.ipynb"
    lowest = YNotebook(Doc(client_id=1))
    async with away_over_a_rebuild(open_tab, target, lowest) as (stays, kept):
        async with open_tab(target.name, notebook=kept) as back:
            assert back.cell("c1")["source"] == "y = 1\n# typed offline"
            type_in(back, "c1", "\n# typed next")
            both = "y = 1\n# typed offline\n# typed next"
            await wait_for(lambda: stays.cell("c1")["source"] == both)
            await asyncio.sleep(0.5)
            assert back.cell("c1")["source"] == both
            assert_yjs_agrees(back)
    await wait_for(lambda: source_on_disk(target, 1) == both, timeout=10)


@pytest.mark.timeout(90)
async def test_a_tab_that_joined_after_the_store_was_lost_merges_its_offline_lines(
    server: ServerProcess,
) -> None:
    """A reload's mark is kept on disk across restarts; the store was then lost (deleted,
    or cut and set aside) and the room built again from the file: a history without that
    reload. A tab that joined the new history never saw the reload because there was none
    to see in it: its offline lines merge, once, where it typed them (chaos seed 2034,
    trial 639: they were also "made again" in another cell)."""
    target = server.root / "lost.ipynb"
    server.root.mkdir(parents=True)
    target.write_text(notebook_json("x = 1", "y = 1", "z = 1"), encoding="utf-8")
    open_tab = await started(server)
    async with open_tab(target.name) as stays:
        await wait_for(lambda: len(stays.notebook.ycells) == 3)
        await asyncio.sleep(1.0)
        target.write_text(notebook_json("checked = 'out'", "y = 1", "z = 1"), encoding="utf-8")
        await wait_for(lambda: stays.cell("c0")["source"] == "checked = 'out'", timeout=10)
        await asyncio.sleep(1.5)  # saved, and the reload's mark kept
    server.stop()
    for suffix in ("", "-journal", "-wal", "-shm"):
        server.ystore.with_name(server.ystore.name + suffix).unlink(missing_ok=True)

    open_tab = await started(server)
    async with open_tab(target.name) as joined:
        await wait_for(lambda: len(joined.notebook.ycells) == 3)
        await asyncio.sleep(1.5)
        kept = joined.notebook
    type_in(joined, "c1", "\n# typed offline")
    async with open_tab(target.name, notebook=kept) as back:
        await wait_for(lambda: back.cell("c1")["source"] == "y = 1\n# typed offline")
        await asyncio.sleep(1.0)
        sources = [str(cell["source"]) for cell in back.notebook.ycells]
        assert sources == ["checked = 'out'", "y = 1\n# typed offline", "z = 1"]
        assert pending_proposals(back) == []
        assert_yjs_agrees(back)
