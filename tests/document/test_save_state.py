"""What a tab knows of the file after the server's own saves (issue 17, point 1b).

JupyterLab's Save compares the file's hash on disk with the one the tab last heard of (the
room's ``hash`` state, under real-time collaboration) and asks "File Changed … Overwrite /
Revert?" when they differ. The server's saves must keep that state in step with the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json, wait_for
from pycrdt import Map, Text
from traitlets.config import Config


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"save_interval": 3600}  # the only save of the test: the one after the run


@pytest.fixture
def jp_server_config(jp_server_config: Config, tmp_path: Path) -> Config:
    # Each notebook save waits a second before it writes, as on a busy machine; the room's
    # autosave waits for an hour of quiet, so no later save covers up a missed hash.
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.save_delay = 1.0
    jp_server_config.DelayedSavesContentsManager.saving_file = str(tmp_path / "saving")
    jp_server_config.YDocExtension.document_save_delay = 3600
    return jp_server_config


@pytest.mark.timeout(90)
async def test_a_tab_edit_during_the_save_after_a_run_does_not_hide_the_saved_file(
    jp_root_dir: Path, tmp_path: Path, open_tab: Any, start_kernel: Any, run_cells: Any,
    jp_fetch: Any,
) -> None:  # fmt: skip
    path = "edited.ipynb"
    (jp_root_dir / path).write_text(notebook_json("print('ran')", "x = 1"), encoding="utf-8")
    async with open_tab(path) as tab:
        await start_kernel(path)
        await run_cells(path, "c0")
        await wait_for(lambda: tab.text("c0") == "ran\n")
        # The save jupyter-loop makes after the run is under way: the user types meanwhile.
        await wait_for((tmp_path / "saving").exists)
        source = tab.notebook.ycells[1]["source"]
        assert isinstance(source, Text)
        source += "0"

        async def on_disk() -> dict[str, Any]:
            response = await jp_fetch("api", "contents", path, params={"content": "1", "hash": "1"})
            return dict(json.loads(response.body))

        saved: dict[str, Any] = {}

        async def ran_saved() -> bool:
            saved.update(await on_disk())
            outputs = saved["content"]["cells"][0]["outputs"]
            return bool(outputs) and outputs[0].get("text") == "ran\n"

        while not await ran_saved():
            pass
        state = tab.notebook.ydoc.get("state", type=Map)
        # What the tab's Save compares: its hash of the file against the file's.
        await wait_for(lambda: state.get("hash") == saved["hash"], timeout=10)


@pytest.fixture
def written_late_config(jp_server_config: Config, tmp_path: Path) -> Config:
    # Saves write at once, then take a second to return: the file on disk is new, the
    # room has not recorded its hash yet (it does once the save returns).
    jp_server_config.DelayedSavesContentsManager.save_delay = 0.0
    jp_server_config.DelayedSavesContentsManager.written_delay = 1.0
    jp_server_config.DelayedSavesContentsManager.written_file = str(tmp_path / "written")
    jp_server_config.DelayedSavesContentsManager.returned_file = str(tmp_path / "returned")
    return jp_server_config


@pytest.mark.timeout(90)
async def test_a_save_check_during_a_server_save_matches_what_the_tab_knows(
    written_late_config: Config, jp_root_dir: Path, tmp_path: Path, open_tab: Any,
    start_kernel: Any, run_cells: Any, jp_fetch: Any,
) -> None:  # fmt: skip
    # JupyterLab's Ctrl-S first asks for the file's hash and compares it with the one its
    # tab last heard of; a save the server made must never leave them apart when it asks.
    path = "checked.ipynb"
    (jp_root_dir / path).write_text(notebook_json("print('ran')"), encoding="utf-8")
    async with open_tab(path) as tab:
        await start_kernel(path)
        await run_cells(path, "c0")
        await wait_for(lambda: tab.text("c0") == "ran\n")
        await wait_for((tmp_path / "written").exists, timeout=20)  # the run's save, written
        returned = tmp_path / "returned"
        returned.unlink(missing_ok=True)  # an earlier save's; the run's returns in a second
        response = await jp_fetch("api", "contents", path, params={"content": "0", "hash": "1"})
        on_disk = json.loads(response.body)["hash"]
        state = tab.notebook.ydoc.get("state", type=Map)
        # The room's update reaches the tab over its own connection before the save returns
        # (events, not a 0.3 s window, which a busy machine could miss).
        heard = lambda: state.get("hash") == on_disk  # noqa: E731
        await wait_for(lambda: heard() or returned.exists(), timeout=30, interval=0.01)
        assert heard(), "the tab heard of the file's hash only once the save returned"
