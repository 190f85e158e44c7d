"""A file replaced on disk by another program while the server writes its own save.

The room checks the file's time before it saves, then writes for as long as the notebook
takes to serialize; a ``git checkout`` landing in that window was renamed over by the
save and lost for good (chaos seed 2029 trial 124). A save now gives way: nothing is
overwritten, the save fails with a 409, and the file is as the other program left it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import notebook_json
from tornado.httpclient import HTTPClientError
from traitlets.config import Config


@pytest.fixture
def jp_server_config(jp_server_config: Config, tmp_path: Path) -> Config:
    jp_server_config.ServerApp.contents_manager_class = (
        "contents_managers.DelayedSavesContentsManager"
    )
    jp_server_config.DelayedSavesContentsManager.rename_delay = 0.5
    jp_server_config.DelayedSavesContentsManager.rename_file = str(tmp_path / "renaming")
    return jp_server_config


def sources(target: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(target.read_text("utf-8"))["cells"]]


async def test_a_file_replaced_while_a_save_writes_is_not_overwritten(
    api: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    target = jp_root_dir / "race.ipynb"
    target.write_text(notebook_json("x = 1"), encoding="utf-8")
    renaming = tmp_path / "renaming"

    def check_out() -> None:  # another program, while the server's save is being written
        for _ in range(500):
            if renaming.exists():
                break
            threading.Event().wait(0.01)
        other = target.with_name("race.ipynb.checkout")
        other.write_text(notebook_json("x = 'checked out'"), encoding="utf-8")
        os.replace(other, target)

    program = threading.Thread(target=check_out)
    program.start()
    model = {"type": "notebook", "content": json.loads(notebook_json("x = 2"))}
    with pytest.raises(HTTPClientError) as refused:
        await api("api", "contents", "race.ipynb", method="PUT", body=model)
    program.join()
    assert refused.value.code == 409
    assert b"changed on disk while" in refused.value.response.body
    assert sources(target) == ["x = 'checked out'"]
    assert not [p.name for p in jp_root_dir.iterdir() if p.name.endswith(".saving")]
    # The next save, once the file is known, goes through.
    renaming.unlink()
    await api("api", "contents", "race.ipynb", method="PUT", body=model)
    assert sources(target) == ["x = 2"]
