"""A run that starts after jupyter-collaboration announced a reload from the file, and
before the reload landed.

The watcher announces a reload (its ``overwrite`` event), then reads the file, then
replaces the notebook: sources *and* outputs. A cell whose run starts in between clears its
outputs and prints; the reload then puts the file's old outputs back, and the run's next
lines came after them (chaos seed 2039 trial 682: a Run All from the terminal client
queued behind another cell, a checkout of every cell in between). The run owns its cell's
outputs, as for a reload that lands mid-run (``test_file_replaced_mid_run.py``): the cell
ends with that run's lines only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json, wait_for
from test_file_replaced_mid_run import LINES, SLOW, check_out, printed
from traitlets.config import Config

from jupyter_loop.testing.yjs import disagreements, read_with_yjs

READ_DELAY = 1.5


@pytest.fixture
def reading_file(tmp_path: Path) -> Path:
    return tmp_path / "reading"


@pytest.fixture
def jp_server_config(jp_server_config: Config, reading_file: Path) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.read_delay = READ_DELAY
    jp_server_config.DelayedSavesContentsManager.reading_file = str(reading_file)
    jp_server_config.YDocExtension.document_save_delay = 3600  # only our saves (see there)
    jp_server_config.YDocExtension.file_poll_interval = 0.3
    return jp_server_config


@pytest.mark.timeout(90)
async def test_a_run_started_while_the_file_is_read_keeps_only_its_lines(
    jp_root_dir: Path,
    start_kernel: Any,
    run_cells: Any,
    read_notebook: Any,
    open_tab: Any,
    reading_file: Path,
) -> None:
    path = "checkout.ipynb"
    target = jp_root_dir / path
    target.write_text(notebook_json(SLOW, "y = 1"), encoding="utf-8")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await wait_for(lambda: len(tab.notebook.ycells) == 2, timeout=20)
        await wait_for(lambda: not reading_file.exists() or reading_file.unlink() or True)
        stale = [{"output_type": "stream", "name": "stdout", "text": "stale 1\nstale 2\n"}]
        check_out(target, SLOW + "\n# checked out", stale)
        # The watcher announced the reload and reads the file for READ_DELAY: run now.
        await wait_for(reading_file.exists, timeout=10)
        await run_cells(path, "c0")

        await wait_for(lambda: tab.cell("c1")["source"] == "y = 2", timeout=20)
        await wait_for(lambda: tab.cell("c0")["execution_count"], timeout=30)
        assert tab.text("c0").splitlines() == [str(i) for i in range(LINES)]
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert disagreements(tab.notebook.ydoc, seen) == []

    saved = await wait_for(
        lambda: (nb := read_notebook(path)) and nb.cells[0].execution_count and nb, timeout=20
    )
    assert printed(saved.cells[0].outputs) == [str(i) for i in range(LINES)]
