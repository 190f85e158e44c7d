"""A failed test that ran a server process shows that server's log.

Tests of restarts and crashes run ``jupyter server`` as a process of its own
(``ServerProcess``, ``HubProcess``); what the server did (which run it replayed, what it
decided a file was) is in its log, under the test's temporary directory. On CI that
directory is gone with the machine, and a failure seen once there could not be explained
(``test_crash_journal``'s checkout case on the JupyterLab 4.5 line, once in many runs). So
a failed test's report gets the end of each log its servers wrote, as a section pytest
prints with the failure; and, since a long test's log end no longer holds its start, every
line of a kernel's life (started, restarted, died, shut down) from the whole log, and the
end of each kernel's own output (``kernel.log`` beside its keeper) that holds an error: a
chaos trial's kernel once died young with no event of the trial's killing it, and why
(a port taken, an import failing) was in neither.

Registered with ``pytest_plugins`` in ``conftest.py``.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from pathlib import Path

import pytest

Report = pytest.TestReport
LINES = 80  # the end of each log: a restart's decisions come last
KERNEL_LINE = re.compile(r"[Kk]ernel (started|restart|died|shutdown)|restarting kernel|found dead")


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
                lives = [line for line in lines if KERNEL_LINE.search(line)]
                if lives:
                    report.sections.append((f"kernel lives in {log.name}", "\n".join(lives)))
            for log in sorted(home.rglob("kernel.log")):
                text = log.read_text(encoding="utf-8", errors="replace")
                if "Error" in text or "Traceback" in text:
                    tail = "\n".join(text.splitlines()[-30:])
                    report.sections.append((f"kernel output {log.parent.name}", tail))
    return report
