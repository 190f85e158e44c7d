"""What jupyter-loop keeps on disk (conversations, journals, full outputs) is the owner's only."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from agent_helpers import Agent, openai_config
from loop_helpers import wait_for

from jupyter_loop.testing import say


@pytest.fixture
def loop_config(loop_model_server, tmp_path: Path):
    return openai_config(
        loop_model_server, data_dir=str(tmp_path / "loop"), output_budget_bytes=2_000
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_conversations_journals_and_outputs_are_private(
    write_notebook, start_kernel, run_cells, read_notebook, api, loop_model_server, tmp_path
):
    path = write_notebook("nb.ipynb", "for i in range(5_000):\n    print(i)")
    await start_kernel(path)
    await run_cells(path, "c0")
    await wait_for(lambda: (nb := read_notebook(path)) and nb.cells[0].get("execution_count"))
    loop_model_server.script(say("hello"))
    agent = Agent(api)
    await agent.start(path, "hi")
    await agent.ended(path)

    root = tmp_path / "loop"
    files = [p for p in root.rglob("*") if p.is_file()]
    folders = [root, *(p for p in root.rglob("*") if p.is_dir())]
    kinds = {p.relative_to(root).parts[0] for p in files}
    assert {"agent", "outputs"} <= kinds, kinds
    assert [(str(p), oct(mode(p))) for p in files if mode(p) != 0o600] == []
    assert [(str(p), oct(mode(p))) for p in folders if mode(p) != 0o700] == []


class TestStateFromBefore:
    """A data directory written before files were made private (0755 folders, 0644 files)
    is tightened when the server starts: group and others lose every right."""

    @pytest.fixture
    def loop_config(self, tmp_path: Path):
        root = tmp_path / "old"
        for folder in ("agent/conversations", "agent/journal", "outputs/r1", "journal"):
            (root / folder).mkdir(parents=True)
        for file in ("agent/conversations/f1.jsonl", "outputs/r1/index.jsonl", "runs.jsonl"):
            (root / file).write_text("{}\n", encoding="utf-8")
        (root / "outputs" / "link").symlink_to(tmp_path)  # not followed, not changed
        for path in (root, *root.rglob("*")):
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() else 0o644)
        tmp_path.chmod(0o755)
        return {"data_dir": str(root)}

    async def test_old_folders_and_files_are_tightened_at_start(self, jp_serverapp, tmp_path):
        root = tmp_path / "old"
        found = [root, *(p for p in root.rglob("*") if not p.is_symlink())]
        loose = [(str(p.relative_to(root)), oct(mode(p))) for p in found if mode(p) & 0o077]
        assert loose == []
        assert {oct(mode(p)) for p in found if p.is_file()} == {"0o600"}
        assert mode(tmp_path) == 0o755  # the symlink's target: not ours to change
