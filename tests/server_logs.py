"""A failed test that ran a server process shows that server's log.

Tests of restarts and crashes run ``jupyter server`` as a process of its own
(``ServerProcess``, ``HubProcess``); what the server did (which run it replayed, what it
decided a file was) is in its log, under the test's temporary directory. On CI that
directory is gone with the machine, and a failure seen once there could not be explained
(``test_crash_journal``'s checkout case on the JupyterLab 4.5 line, once in many runs). So
a failed test's report gets the end of each log its servers wrote, as a section pytest
prints with the failure.

Registered with ``pytest_plugins`` in ``conftest.py``.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

Report = pytest.TestReport
LINES = 80  # the end of each log: a restart's decisions come last


def _homes(item: pytest.Item) -> list[Path]:
    """The state directories of the server processes among the test's fixtures."""
    values = getattr(item, "funcargs", {}).values()
    return sorted({v.home for v in values if isinstance(getattr(v, "home", None), Path)})


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, Report, Report]:
    report = yield
    if report.when == "call" and report.failed:
        for home in _homes(item):
            for log in sorted(home.glob("server-*.log")):
                lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
                report.sections.append((f"server log {log.name}", "\n".join(lines[-LINES:])))
    return report
