"""Fixtures: a real Jupyter server with jupyter-loop and collaboration, real kernels."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from loop_helpers import notebook_json, wait_for
from traitlets.config import Config
from yclient import open_tab_factory

# The one fixture plugin (loop_fixtures) and the hooks of the run (exit_guard, server_logs,
# jupyterlab_lines), registered here once: pytest allows ``pytest_plugins`` only in this
# top-level conftest.py, and a plugin a test module registers would reach every test after
# it in the run, but not a file run alone.
pytest_plugins = [
    "pytest_jupyter.jupyter_server",
    "loop_fixtures",
    "exit_guard",
    "server_logs",
    "jupyterlab_lines",
]

# Each folder's conftest.py is imported as a module named ``conftest``; ``--doctest-modules``
# would import every one again as a module to search for doctests, and find the name taken
# by another folder's. They hold no doctests: not collected as modules.
collect_ignore_glob = ["conftest.py", "*/conftest.py"]


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
                # objects for the whole session (tests/server/test_loop_health.py freezes a
                # server process of its own).
                "freeze_startup_heap": False,
                **loop_config,
            },
        }
    )
    if authorizer is not None:
        config.ServerApp.authorizer_class = authorizer
    return config


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
