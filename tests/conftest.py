"""Fixtures: a real Jupyter server with jupyter-loop and collaboration, real kernels."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from pycrdt import Text
from traitlets.config import Config
from yclient import open_tab_factory

pytest_plugins = [
    "pytest_jupyter.jupyter_server",
    "exit_guard",
    "kept_helpers",
    "server_logs",
    "jupyterlab_lines",
]


@pytest.fixture
def rtc_cleanup_delay() -> float:
    """Seconds jupyter_server_ydoc keeps a room after its last client leaves."""
    return 60.0


@pytest.fixture
def loop_config() -> dict[str, Any]:
    """Extra ``JupyterLoopApp`` settings a test wants."""
    return {}


@pytest.fixture
def authorizer() -> str | None:
    """``ServerApp.authorizer_class`` of the test server (None: Jupyter's own); a test
    sets it by overriding this fixture or parametrizing it (``authorizers.both``)."""
    return None


@pytest.fixture
def jp_server_config(
    tmp_path: Path,
    jp_root_dir: Path,
    rtc_cleanup_delay: float,
    loop_config: dict[str, Any],
    authorizer: str | None,
) -> Config:
    config = Config(
        {
            "ServerApp": {
                "jpserver_extensions": {
                    "jupyter_loop": True,
                    "jupyter_server_ydoc": True,
                    "jupyter_server_fileid": True,
                    # pytest-jupyter adds terminals unless told otherwise; not ours to test.
                    "jupyter_server_terminals": False,
                },
                "allow_unauthenticated_access": False,
            },
            "SQLiteYStore": {"db_path": str(tmp_path / "ystore.db")},
            "BaseFileIdManager": {
                "root_dir": str(jp_root_dir),
                "db_path": str(tmp_path / "fileid.db"),
                "db_journal_mode": "OFF",
            },
            "YDocExtension": {
                "document_cleanup_delay": rtc_cleanup_delay,
                "document_save_delay": 0.5,
            },
            # State of its own per test: runs and journals left by one test's server must
            # not be recovered by the next one's.
            "JupyterLoopApp": {
                "save_interval": 1.0,
                "data_dir": str(tmp_path / "jupyter_loop"),
                # The server runs inside pytest here: freezing would keep every test's
                # objects for the whole session (tests/test_loop_health.py freezes a
                # server process of its own).
                "freeze_startup_heap": False,
                **loop_config,
            },
        }
    )
    if authorizer is not None:
        config.ServerApp.authorizer_class = authorizer
    return config


def notebook_json(*sources: str, cell_type: str = "code") -> str:
    """A notebook whose cells have ids ``c0``, ``c1``, ... and the given sources."""
    nb = nbformat.v4.new_notebook()
    for index, source in enumerate(sources):
        make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
        cell = make(source)
        cell["id"] = f"c{index}"
        nb.cells.append(cell)
    return nbformat.writes(nb)


def type_in(tab: Any, cell_id: str, text: str) -> None:
    """Type ``text`` at the end of a cell's source in a tab (a Y client of the room)."""
    for ycell in tab.notebook.ycells:
        if ycell.get("id") == cell_id:
            source = ycell["source"]
            assert isinstance(source, Text)
            source += text


def replace_on_disk(target: Path, text: str) -> None:
    """What a ``git checkout`` does to a file: another version renamed over it."""
    replacement = target.with_name(target.name + ".checkout")
    replacement.write_text(text, encoding="utf-8")
    os.replace(replacement, target)


def source_on_disk(target: Path, index: int) -> str:
    """The source of cell ``index`` as the notebook's file holds it."""
    source = json.loads(target.read_text("utf-8"))["cells"][index]["source"]
    return "".join(source) if isinstance(source, list) else str(source)


@pytest.fixture
def write_notebook(jp_root_dir: Path) -> Callable[..., str]:
    def write(path: str, *sources: str) -> str:
        target = jp_root_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(notebook_json(*sources), encoding="utf-8")
        return path

    return write


@pytest.fixture
def read_notebook(jp_root_dir: Path) -> Callable[[str], Any]:
    """Read a notebook from disk; ``None`` while it is not there or not a notebook.

    The server's saves rename a whole file into place (``jupyter_loop/saves.py``), so a
    reader sees the old notebook or the new one: poll with :func:`wait_for` for a change.
    """

    def read(path: str) -> Any:
        try:
            text = (jp_root_dir / path).read_text(encoding="utf-8")
            return nbformat.reads(text, as_version=4)
        except (nbformat.reader.NotJSONError, ValueError):
            return None

    return read


@pytest.fixture
def api(jp_fetch: Any) -> Callable[..., Awaitable[Any]]:
    """Call the REST API; returns the decoded JSON body (raises on 4xx/5xx)."""

    async def call(*parts: str, method: str = "GET", body: Any = None, **kwargs: Any) -> Any:
        if body is not None and not isinstance(body, (str, bytes)):
            body = json.dumps(body)
        response = await jp_fetch(*parts, method=method, body=body, **kwargs)
        return json.loads(response.body or b"null")

    return call


@pytest.fixture
def start_kernel(api: Any) -> Callable[[str], Awaitable[str]]:
    """Open a notebook session (as JupyterLab does) and return its kernel id.

    The server fixture shuts every kernel down at the end of the test.
    """

    async def start(path: str) -> str:
        session = await api(
            "api",
            "sessions",
            method="POST",
            body={"path": path, "type": "notebook", "name": "", "kernel": {"name": "python3"}},
        )
        return str(session["kernel"]["id"])

    return start


@pytest.fixture
def kernel_back(jp_serverapp: Any) -> Callable[[str], Awaitable[None]]:
    """Wait until the auto-restarter has brought a dead kernel back up.

    The server fixture shuts kernels down at teardown; jupyter_client cannot shut down a
    kernel caught between restart steps (its ``ready`` future still pending), so tests that
    kill a kernel wait for this before they end.
    """

    async def back(kernel_id: str) -> None:
        manager = jp_serverapp.kernel_manager.get_kernel(kernel_id)
        deadline = asyncio.get_running_loop().time() + 60
        while not (manager.ready.done() and await manager.is_alive()):
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"kernel {kernel_id} was not restarted")
            await asyncio.sleep(0.1)

    return back


@pytest.fixture
def run_cells(api: Any) -> Callable[..., Awaitable[Any]]:
    async def run(path: str, *cell_ids: str, **extra: Any) -> Any:
        body = {"path": path, "cell_ids": list(cell_ids), **extra}
        return await api("api", "jupyter-loop", "runs", method="POST", body=body)

    return run


async def wait_for(
    predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05
) -> Any:
    """Poll until ``predicate()`` is truthy; return its value or fail after ``timeout``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"Timed out after {timeout} s waiting for {predicate}")
        await asyncio.sleep(interval)


@pytest.fixture
def open_tab(jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: Any) -> Any:
    """``async with open_tab(path) as tab``: a real Y client in the notebook's room."""
    base = f"ws://127.0.0.1:{jp_http_port}{jp_base_url}"
    return open_tab_factory(jp_fetch, base, dict(jp_auth_header))


@pytest.fixture
def notebook_in_tab(
    write_notebook: Callable[..., str], start_kernel: Any, open_tab: Any
) -> Callable[..., AbstractAsyncContextManager[tuple[str, Any]]]:
    """``async with notebook_in_tab(name, *sources) as (path, tab)``: the notebook written
    with one code cell per source (ids ``c0``, ``c1``, ...), its kernel started as
    JupyterLab opens it, and a tab in its room once the tab shows its cells."""

    @asynccontextmanager
    async def opened(name: str, *sources: str) -> AsyncIterator[tuple[str, Any]]:
        path = write_notebook(name, *sources)
        await start_kernel(path)
        async with open_tab(path) as tab:
            await wait_for(lambda: tab.notebook.cell_number)
            yield path, tab

    return opened
