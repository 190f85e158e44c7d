"""A damaged state file in the data directory costs its own feature's past, nothing else.

Each test writes one damaged file where a real server process keeps its state, starts the
server and checks: the extension's routes answer, the file was moved aside (kept for the
user, named in ``GET status``), the feature it belongs to works, empty, and the server
stops on SIGTERM.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loop_fixtures import Serve
from loop_helpers import notebook_json

from jupyter_loop.execution.durability.ledger import RunLedger
from jupyter_loop.keeper.registry import KeeperEntry, list_entries, write_entry
from jupyter_loop.state_files import DamagedFiles
from jupyter_loop.testing.server_process import ServerProcess

NOT_A_DATABASE = b"these bytes are not an SQLite database\n" * 200
TORN_DATABASE = b"SQLite format 3\x00" + bytes(4096)  # a header, then nothing that reads


def data_dir(server: ServerProcess) -> Path:
    return server.home / "data" / "jupyter_loop"


def mistyped_entry(root: Path) -> Path:
    entry = {
        "kernel_id": "k-damaged",
        "kernel_name": "python3",
        "connection": {"ip": "127.0.0.1"},
        "server_pid": "not a pid",
        "keeper_pid": ["1"],
        "state": "running",
    }
    path = root / "kernels" / "k-damaged" / "entry.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(entry))
    return path


async def feature_works(server: ServerProcess, name: str) -> None:
    """The feature the damaged file belongs to answers, empty."""
    if name == "tokens.json":
        assert await server.api("api", "jupyter-loop", "tokens") == {"tokens": []}
        made = await server.api(
            "api", "jupyter-loop", "tokens", method="POST", body={"scope": "read"}
        )
        assert made["token"].startswith("jlt_")
    elif name == "history.sqlite3":
        reply = await server.api("api", "jupyter-loop", "history?path=a.ipynb")
        assert reply["runs"] == []
    elif name == "versions.sqlite3":
        reply = await server.api("api", "jupyter-loop", "versions?path=a.ipynb")
        assert reply["versions"] == []
    else:
        assert await server.api("api", "kernels") == []


DAMAGES: dict[str, Callable[[Path], Any]] = {
    "history.sqlite3": lambda root: (root / "history.sqlite3").write_bytes(NOT_A_DATABASE),
    "versions.sqlite3": lambda root: (root / "versions.sqlite3").write_bytes(TORN_DATABASE),
    "runs.jsonl": lambda root: (root / "runs.jsonl").write_bytes(bytes(range(128, 256)) * 8),
    "entry.json": mistyped_entry,
    "tokens.json": lambda root: (root / "tokens.json").write_text('{"not": "a list"}'),
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", list(DAMAGES))
async def test_a_damaged_state_file_is_moved_aside_and_the_rest_works(loop_serve: Serve, name: str):
    server = loop_serve()
    root = data_dir(server)
    root.mkdir(parents=True)
    damaged = DAMAGES[name](root)
    original = damaged if isinstance(damaged, Path) else root / name
    before = original.read_bytes()
    server.root.mkdir(parents=True)
    (server.root / "a.ipynb").write_text(notebook_json("1 + 1"))
    server.start()
    await server.ready()

    await feature_works(server, name)
    status = await server.api("api", "jupyter-loop", "status")
    [noted] = status["damaged"]
    moved = Path(noted["moved_to"])
    assert noted["file"] == str(original)
    assert moved.parent == original.parent and moved.name.startswith(f"{name}.damaged-")
    assert moved.read_bytes() == before  # kept whole for the user
    assert noted["reason"]
    # ``jupyter loop status`` names it too.
    environment = {**os.environ, "JUPYTER_RUNTIME_DIR": str(server.home / "runtime"),
                   "PYTHONPATH": os.pathsep.join(sys.path)}  # fmt: skip
    cli = subprocess.run(
        [sys.executable, "-m", "jupyter_loop.cli", "status"],
        capture_output=True, text=True, env=environment, timeout=60,
    )  # fmt: skip
    assert cli.returncode == 0 and f"{original} -> {moved}" in cli.stdout, cli
    logs = "".join(p.read_text(errors="replace") for p in server.home.glob("server-*.log"))
    assert str(moved) in logs

    assert server.stop(timeout=30) < 30  # the server stops on SIGTERM


@pytest.mark.timeout(120)
async def test_a_sound_data_dir_reports_nothing_damaged(loop_serve: Serve):
    server = loop_serve()
    server.start()
    await server.ready()
    assert (await server.api("api", "jupyter-loop", "status"))["damaged"] == []
    server.stop(timeout=30)


@pytest.mark.timeout(120)
async def test_a_server_whose_extension_could_not_start_stops_on_sigterm(loop_serve: Serve):
    """Whatever stops the extension's start (here a data directory that is a file), the
    server still stops on SIGTERM: it waited forever when stopping the half-started
    extension raised."""
    probe = loop_serve()
    not_a_dir = probe.home / "a-file"
    not_a_dir.write_text("not a directory")
    server = loop_serve(f"--JupyterLoopApp.data_dir={not_a_dir}")
    server.start()
    await server.ready()
    assert server.stop(timeout=30) < 30


def test_a_line_torn_by_a_kill_is_not_damage(tmp_path: Path) -> None:
    """A kill leaves the ledger's last line torn, and the next process ends it with a
    newline: a line that does not parse is skipped, the file is not moved aside."""
    path = tmp_path / "runs.jsonl"
    entry = {"room_id": "r", "cell_id": "c", "run_id": "run1", "state": "running"}
    path.write_text(
        json.dumps({"put": entry}) + "\n" + '{"put": {"room_id": "r", "ce' + "\n"
        + json.dumps({"put": {**entry, "run_id": "run2"}}) + "\n"
    )  # fmt: skip
    damaged = DamagedFiles(logging.getLogger("test"))
    ledger = RunLedger(path, logging.getLogger("test"), damaged)
    assert [e.run_id for e in ledger.load()] == ["run1", "run2"]
    assert damaged.listed() == [] and path.exists()


def test_an_entry_of_a_later_version_is_read(tmp_path: Path) -> None:
    """Fields a later version adds are ignored, not taken for damage."""
    directory = tmp_path / "k1"
    write_entry(directory, KeeperEntry("k1", "python3", {"ip": "127.0.0.1"}, server_pid=1))
    raw = json.loads((directory / "entry.json").read_text())
    (directory / "entry.json").write_text(json.dumps({**raw, "added_later": [1, 2]}))
    damaged = DamagedFiles(logging.getLogger("test"))
    assert [e.kernel_id for e in list_entries(tmp_path, damaged)] == ["k1"]
    assert damaged.listed() == []
