"""Saves that cannot tear (``jupyter_loop/saves.py``): a server killed at any point of a
save leaves the old notebook or the new one, a read during saves never fails, and the rest
of jupyter_server's saving (checkpoints, modes, symlinks, ``use_atomic_writing``) holds."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import nbformat
import pytest
from loop_helpers import notebook_json, wait_for
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

from jupyter_loop.saves import ReplacingAsyncLargeFileManager, ReplacingSavesMixin
from jupyter_loop.testing.server_process import ServerProcess

TESTS = Path(__file__).parents[1]  # the helpers' folder (contents_managers)
BULK = "x" * 200 + "\n"  # a stored output line: the notebook weighs what real ones do


def heavy_notebook(source: str, cells: int = 60, lines: int = 150) -> Any:
    """A notebook of ``cells`` cells with stored outputs (about 30 KB each) after ``source``."""
    notebook = nbformat.reads(notebook_json(source), as_version=4)
    for index in range(1, cells):
        cell = nbformat.v4.new_code_cell(f"print('cell {index}')")
        cell["id"] = f"c{index}"
        cell["outputs"] = [nbformat.v4.new_output("stream", name="stdout", text=BULK * lines)]
        notebook.cells.append(cell)
    return notebook


def read_whole(path: Path) -> Any:
    """The notebook as the next tool reads it (nbformat, validated): raises if torn."""
    notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    nbformat.validate(notebook)
    return notebook


@pytest.fixture
def pausing_server(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ServerProcess]:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), *sys.path]))
    process = ServerProcess(
        tmp_path,
        "--ServerApp.contents_manager_class=contents_managers.PausingContentsManager",
        f"--PausingContentsManager.armed_file={tmp_path / 'armed'}",
        f"--PausingContentsManager.paused_file={tmp_path / 'paused'}",
        f"--PausingContentsManager.pause_at={request.param}",
    )
    yield process
    process.kill()


@pytest.mark.parametrize("pausing_server", ["start", "middle", "written"], indirect=True)
@pytest.mark.timeout(90)
async def test_a_kill_at_any_point_of_a_save_leaves_a_whole_notebook(
    pausing_server: ServerProcess, tmp_path: Path
) -> None:
    server, path = pausing_server, "kept.ipynb"
    server.root.mkdir(parents=True)
    old = heavy_notebook("print('old')")
    nbformat.write(old, server.root / path)
    server.start()
    await server.ready()
    new = heavy_notebook("print('new')")
    (tmp_path / "armed").touch()
    save = asyncio.ensure_future(
        server.api("api", "contents", path, method="PUT", body={"type": "notebook", "content": new})
    )
    await wait_for((tmp_path / "paused").exists, timeout=60)
    server.kill()
    with pytest.raises((HTTPClientError, OSError)):
        await save  # the save never answered: the server died in the middle of it
    notebook = read_whole(server.root / path)
    assert notebook.cells[0].source in ("print('old')", "print('new')")
    assert len(notebook.cells) == len(old.cells)


def printed_lines(notebook: Any) -> list[str]:
    outputs = notebook["cells"][0].get("outputs", []) if notebook else []
    return "".join("".join(o.get("text", "")) for o in outputs).split()


@pytest.mark.timeout(180)
async def test_reads_during_a_stream_of_saves_never_fail(tmp_path: Path) -> None:
    """A reader (git, nbconvert, the CLI, a hub's health check) reads the notebook through
    the contents API while a printing cell makes the server save it every 0.1 s."""
    server, path = ServerProcess(tmp_path, "--JupyterLoopApp.save_interval=0.1"), "p.ipynb"
    # The cell prints until the readers have seen five saves (at most ~60 s): on a loaded
    # machine a fixed number of lines ended before the reads met that many (CI, with the
    # two JupyterLab lines' tests side by side, saw 3).
    stop = tmp_path / "stop-printing"
    printer = (
        f"import os, time\ni = 0\nwhile not os.path.exists({str(stop)!r}) and i < 3000:\n"
        "    print(i, flush=True)\n    i += 1\n    time.sleep(0.02)\nprint('done')"
    )
    server.root.mkdir(parents=True)
    nbformat.write(heavy_notebook(printer, cells=30), server.root / path)
    server.start()
    failures: list[str] = []
    versions: set[str] = set()
    reading = True

    async def reader() -> None:
        while reading:
            try:
                model = await server.api("api", "contents", path)
                versions.add(model["last_modified"])
            except HTTPClientError as error:
                body = error.response.body[:200] if error.response else b""
                failures.append(f"{error.code} {body!r}")

    try:
        await server.ready()
        await server.start_kernel(path)
        readers = asyncio.gather(reader(), reader())
        await server.api(
            "api", "jupyter-loop", "runs", method="POST", body={"path": path, "cell_ids": ["c0"]}
        )
        with suppress(AssertionError):  # said below if the saves never came
            await wait_for(lambda: len(versions) >= 5, timeout=60)
        stop.touch()
        with suppress(AssertionError):  # the file may never get there: said below
            await wait_for(lambda: printed_lines(server.saved(path))[-1:] == ["done"], timeout=60)
        reading = False
        await readers
    finally:
        server.kill()
    assert failures == []
    # Nothing moved aside as .invalid, no backup left: the notebook, whole, with every line.
    assert sorted(p.name for p in server.root.iterdir() if p.is_file()) == [path]
    assert printed_lines(server.saved(path))[-1:] == ["done"]
    assert len(versions) >= 5, "the reads did not overlap a stream of saves"


async def test_the_server_saves_through_the_replacing_layer(jp_serverapp: Any) -> None:
    manager = jp_serverapp.contents_manager
    assert isinstance(manager, ReplacingAsyncLargeFileManager)


async def test_checkpoints_and_permission_bits_survive_saves(api: Any, jp_root_dir: Path) -> None:
    path = "kept.ipynb"
    file = jp_root_dir / path
    nbformat.write(heavy_notebook("print('first')", cells=3), file)
    file.chmod(0o640)
    checkpoint = await api("api", "contents", path, "checkpoints", method="POST", body="")
    model = await api("api", "contents", path)
    model["content"]["cells"][0]["source"] = "print('second')"
    await api("api", "contents", path, method="PUT", body=model)
    assert read_whole(file).cells[0].source == "print('second')"
    assert stat.S_IMODE(file.stat().st_mode) == 0o640
    await api("api", "contents", path, "checkpoints", checkpoint["id"], method="POST", body="")
    assert read_whole(file).cells[0].source == "print('first')"
    assert [name for name in os.listdir(jp_root_dir) if name.endswith(".saving")] == []


def process_umask() -> int:
    """Read without changing it (``os.umask`` sets it, racing the server's threads)."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Umask")), 8)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the umask from /proc")
async def test_a_new_file_gets_the_mode_open_would_give_it(api: Any, jp_root_dir: Path) -> None:
    await api(
        "api",
        "contents",
        "new.txt",
        method="PUT",
        body={"type": "file", "format": "text", "content": "hi"},
    )
    assert (jp_root_dir / "new.txt").read_text() == "hi"
    assert stat.S_IMODE((jp_root_dir / "new.txt").stat().st_mode) == 0o666 & ~process_umask()


async def test_a_symlinked_notebook_is_saved_through_its_link(api: Any, jp_root_dir: Path) -> None:
    real = jp_root_dir / "real.ipynb"
    nbformat.write(heavy_notebook("print('first')", cells=2), real)
    (jp_root_dir / "link.ipynb").symlink_to("real.ipynb")
    model = await api("api", "contents", "link.ipynb")
    model["content"]["cells"][0]["source"] = "print('second')"
    await api("api", "contents", "link.ipynb", method="PUT", body=model)
    assert (jp_root_dir / "link.ipynb").is_symlink()
    assert read_whole(real).cells[0].source == "print('second')"


@pytest.fixture
def jp_server_config(jp_server_config: Config, use_atomic_writing: bool) -> Config:
    jp_server_config.FileContentsManager.use_atomic_writing = use_atomic_writing
    return jp_server_config


@pytest.fixture
def use_atomic_writing() -> bool:
    return True


@pytest.mark.parametrize("use_atomic_writing", [True, False])
async def test_use_atomic_writing_false_writes_in_place_as_jupyter_server_does(
    api: Any, jp_root_dir: Path, use_atomic_writing: bool
) -> None:
    """What tells the two apart on disk: a rename gives the path a new inode, an in-place
    write keeps it (which some network file systems need)."""
    path = "inode.ipynb"
    file = jp_root_dir / path
    nbformat.write(heavy_notebook("print('first')", cells=2), file)
    model = await api("api", "contents", path)
    model["content"]["cells"][0]["source"] = "print('second')"
    before = file.stat().st_ino
    await api("api", "contents", path, method="PUT", body=model)
    assert (file.stat().st_ino == before) is not use_atomic_writing
    assert read_whole(file).cells[0].source == "print('second')"


def test_a_users_file_manager_gets_the_layer_under_its_own_methods() -> None:
    from contents_managers import PausingContentsManager

    from jupyter_loop.saves import with_replacing_saves

    chosen = with_replacing_saves(PausingContentsManager)
    order = chosen.__mro__
    assert order.index(PausingContentsManager) < order.index(ReplacingSavesMixin)
    assert chosen.__name__ == "PausingContentsManager"
