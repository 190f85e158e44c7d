"""``jupyter loop run`` following a run its cell never showed: it asks the server how the
run ended instead of waiting for ever (chaos seed 2028, trials 20 and 84)."""

from __future__ import annotations

import io

from jupyter_ydoc import YNotebook
from pycrdt import Map

from jupyter_loop.cli.run import RunFollower
from jupyter_loop.execution.board import BOARD


def one_cell_shown_running_by(run_id: str) -> YNotebook:
    notebook = YNotebook()
    cell = {"id": "c0", "cell_type": "code", "source": "1", "metadata": {}, "outputs": []}
    notebook.append_cell({**cell, "execution_count": None})
    notebook.ydoc.get(BOARD, type=Map)["c0"] = {"state": "running", "run_id": run_id}
    return notebook


async def test_a_run_the_cell_never_showed_ends_as_the_server_says() -> None:
    asked: list[tuple[str, str]] = []

    async def ended(cell_id: str, run_id: str) -> str | None:
        asked.append((cell_id, run_id))
        return None if len(asked) < 2 else "error"  # pending at first, then over

    out, err = io.StringIO(), io.StringIO()
    follower = RunFollower(one_cell_shown_running_by("later"), out, err, ended, ask_after=0.05)
    assert await follower.follow([{"cell_id": "c0", "run_id": "ours"}]) == ["error"]
    follower.close()
    assert asked == [("c0", "ours"), ("c0", "ours")]
    assert "error (the cell has run again since" in err.getvalue() and out.getvalue() == ""
