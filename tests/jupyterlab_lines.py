"""Which tests the previous JupyterLab line runs: those that touch the collaboration stack.

CI tests two lines of JupyterLab: the current one (4.6, jupyter-collaboration 5) runs every
test, the previous one (4.5, jupyter-collaboration 4, pycrdt 0.13) only what the two lines
can differ on: a test that opens a room or a Y client, runs a cell (its outputs are written
into a room), or imports pycrdt, jupyter_ydoc, jupyter_server_ydoc or the Y client of
``yclient.py``. Such a test gets the ``collaboration`` marker, and the old line runs
``pytest -m collaboration``. A test the rule misses can say so itself with
``@pytest.mark.collaboration``.

Why a rule and not a list: a list of files is out of date the day a test is added to a
new one; the rule marks a new test by what it uses. The rejected alternative, running
the whole suite on both lines, spent a second line's worth of CI time on rights tables,
model protocols and terminal rendering that no JupyterLab version can change.

Registered with ``pytest_plugins`` in ``conftest.py``.
"""

from __future__ import annotations

import types

import pytest

# The fixtures that open a room, a tab or a kernel whose outputs go into a room.
ROOM_FIXTURES = frozenset(
    {"open_tab", "notebook_in_tab", "run_cells", "start_kernel", "kernel_back"}
)
# The libraries whose versions differ between the two lines.
COLLABORATION_LIBRARIES = ("pycrdt", "jupyter_ydoc", "jupyter_server_ydoc", "yclient")


def uses_collaboration_libraries(module: types.ModuleType | None) -> bool:
    """Whether a test module imports a library of the collaboration stack.

    >>> import pycrdt
    >>> uses_collaboration_libraries(types.SimpleNamespace(pycrdt=pycrdt))
    True
    >>> uses_collaboration_libraries(types.SimpleNamespace(json=__import__("json")))
    False
    """
    if module is None:
        return False
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, types.ModuleType) else None
        name = name or getattr(value, "__module__", None)
        if isinstance(name, str) and name.split(".")[0] in COLLABORATION_LIBRARIES:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "collaboration: touches jupyter-collaboration, pycrdt or jupyter_ydoc "
        "(run on both JupyterLab lines; set by tests/jupyterlab_lines.py)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    modules: dict[str, bool] = {}
    for item in items:
        if item.get_closest_marker("collaboration"):
            continue
        module = getattr(item, "module", None)
        key = getattr(module, "__name__", "")
        if key not in modules:
            modules[key] = uses_collaboration_libraries(module)
        fixtures = set(getattr(item, "fixturenames", ()))
        if modules[key] or fixtures & ROOM_FIXTURES:
            item.add_marker(pytest.mark.collaboration)
