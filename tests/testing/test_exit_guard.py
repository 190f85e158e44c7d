"""The exit guard ends a finished test run that a leftover thread would keep alive."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LEFTOVER = """
import threading

def test_leaves_a_thread_behind():
    threading.Thread(target=threading.Event().wait, name="never-ends").start()
    assert OUTCOME
"""


def run_pytest_on(tmp_path: Path, outcome: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_leftover.py").write_text(LEFTOVER.replace("OUTCOME", str(outcome)))
    env = {
        **os.environ,
        "JUPYTER_LOOP_TEST_EXIT_GRACE": "1",
        "PYTHONPATH": str(Path(__file__).parents[1]),
    }
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "exit_guard"]
    return subprocess.run(
        [*command, "-c", os.devnull, str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip


@pytest.mark.parametrize(("outcome", "status"), [(True, 0), (False, 1)])
def test_a_thread_left_behind_ends_with_pytests_status(
    tmp_path: Path, outcome: bool, status: int
) -> None:
    finished = run_pytest_on(tmp_path, outcome)
    assert finished.returncode == status, finished.stdout + finished.stderr
    assert "exit-guard" in finished.stderr and "'never-ends'" in finished.stderr
