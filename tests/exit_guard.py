"""A test run that has finished ends, even if a thread some library left behind would not.

Python waits for every non-daemon thread before it exits. AnyIO's worker threads (the
YStore's SQLite calls run on them) stop only when the task that started them ends; a
server's room task that a test's closed event loop abandons never does, and an
interpreter waiting for such a thread waits for ever: CI would see its time run out
with every test passed. Once pytest is done, a daemon watchdog gives the process a
minute to exit; after that it prints every thread's stack (what held the exit, for the
log) and ends the process with pytest's own exit status.

Registered with ``pytest_plugins`` in ``conftest.py``.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time

import pytest

GRACE_SECONDS = float(os.environ.get("JUPYTER_LOOP_TEST_EXIT_GRACE", "60"))

_status = {"code": 0}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _status["code"] = int(exitstatus)


def pytest_unconfigure(config: pytest.Config) -> None:
    threading.Thread(target=_end_after_grace, name="exit-guard", daemon=True).start()


def _end_after_grace() -> None:
    time.sleep(GRACE_SECONDS)
    held = [t.name for t in threading.enumerate() if not t.daemon and t.is_alive()]
    stream = sys.__stderr__ or sys.stderr
    stream.write(
        f"\nexit-guard: the test run ended {GRACE_SECONDS:.0f} s ago but these threads "
        f"kept the process from exiting: {held}; their stacks:\n"
    )
    stream.flush()
    faulthandler.dump_traceback(file=stream, all_threads=True)
    os._exit(_status["code"])
