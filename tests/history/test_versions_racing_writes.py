"""A file written by another program in the moment between a save and its post-save hook.

jupyter_server runs the post-save hooks after the save's file is in place; on a busy
machine another program (git, an editor, a script that waited for the save) can write the
file in between. The save's version must still be what the server saved, and the other
program's file must be kept as found on disk, not as the server's save.
(Seen in CI: ``test_cli``'s overwrite landed there, and no version kept the run's outputs.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json
from test_versions import save, sources_of, versions
from traitlets.config import Config

from jupyter_loop.history.versions.store import ON_DISK, SAVED


@pytest.fixture
def jp_server_config(jp_server_config: Config, tmp_path: Path) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.hooks_delay = 0.5
    jp_server_config.DelayedSavesContentsManager.hooks_file = str(tmp_path / "written")
    return jp_server_config


async def test_a_write_between_a_save_and_its_hook_is_not_kept_as_the_save(
    api: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    notebook, written = jp_root_dir / "nb.ipynb", tmp_path / "written"
    await save(api, "nb.ipynb", "x = 1")
    written.unlink()

    async def write_when_the_save_has_written() -> None:
        while not written.exists():
            await asyncio.sleep(0.01)
        notebook.write_text(notebook_json("clobbered"), "utf-8")  # in place, as editors do

    other_program = asyncio.create_task(write_when_the_save_has_written())
    await save(api, "nb.ipynb", "x = 1", "y = 2")
    await other_program
    assert "clobbered" in notebook.read_text("utf-8")

    kept = await versions(api, "nb.ipynb")
    assert await sources_of(api, "nb.ipynb", kept[0]["number"]) == ["x = 1", "y = 2"]
    assert [v["kind"] for v in kept] == [SAVED, SAVED]
    # The next save replaces the other program's file: it is kept before it goes.
    await save(api, "nb.ipynb", "x = 3")
    kept = await versions(api, "nb.ipynb")
    assert [v["kind"] for v in kept[:2]] == [SAVED, ON_DISK]
    assert await sources_of(api, "nb.ipynb", kept[1]["number"]) == ["clobbered"]
