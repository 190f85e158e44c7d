"""How often a notebook a cell keeps printing into is saved, when saves are slow.

On a loaded server (the 40 busy notebooks of ``bench/capacity.py``) each save takes long:
its turn on the event loop comes late. The saves forced while a cell prints
(``save_interval``, ``document/room_saves.py``) then must not come faster than they go:
a save started while the last one of the same room is still under way queues behind it,
each costs the whole loop a notebook's serialization, signature and read-back, and the
loop falls further behind (a save storm). Saves are counted where they reach the disk: a
real contents manager whose saves take ``SAVE_TAKES`` seconds (a busy machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loop_helpers import wait_for
from traitlets.config import Config

SAVE_TAKES = 1.0
INTERVAL = 1.0
PRINTS_FOR = 10.0
CODE = (
    "import time\n"
    f"for i in range({int(PRINTS_FOR / 0.05)}):\n"
    "    print(i, flush=True)\n"
    "    time.sleep(0.05)\n"
)


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"save_interval": INTERVAL}


@pytest.fixture
def saves_log(tmp_path: Path) -> Path:
    return tmp_path / "saves.log"


@pytest.fixture
def jp_server_config(jp_server_config: Config, saves_log: Path) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.save_delay = SAVE_TAKES
    jp_server_config.DelayedSavesContentsManager.saves_log = str(saves_log)
    jp_server_config.YDocExtension.document_save_delay = 3600  # the room's own autosave off
    return jp_server_config


def saves_of(log: Path, path: str) -> int:
    try:
        return log.read_text(encoding="utf-8").split().count(path)
    except FileNotFoundError:
        return 0


@pytest.mark.timeout(90)
async def test_a_printing_cell_saves_no_faster_than_its_saves_go(
    notebook_in_tab: Any, run_cells: Any, saves_log: Path
) -> None:
    async with notebook_in_tab("busy.ipynb", CODE) as (path, tab):
        await run_cells(path, "c0")
        await wait_for(lambda: (tab.marker("c0") or {}).get("state") == "done", 60)
        while_printing = saves_of(saves_log, path)
    # One save at a time, the next one ``INTERVAL`` after the last one ended: at most one
    # per SAVE_TAKES + INTERVAL seconds, and one more for the run's end. A save started
    # every INTERVAL, whether or not the last had ended, made 5 in 6 s (as fast as they went).
    bound = int(PRINTS_FOR / (SAVE_TAKES + INTERVAL)) + 1
    assert while_printing <= bound, f"{while_printing} saves in {PRINTS_FOR} s (bound {bound})"
