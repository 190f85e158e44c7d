"""SIGINT stops the server in order when no terminal can confirm it.

A Jupyter server asks "Shut down this Jupyter server (y/[n])?" on SIGINT only when its
standard input is a terminal. Without one (a hub's spawner, a container, systemd) SIGINT
raises ``KeyboardInterrupt`` out of the event loop: extensions are never stopped, kernels
never shut down, and the interpreter then waits forever at exit for the idle worker thread
that the collaboration store's SQLite calls (through anyio) leave behind. JupyterHub's
spawner sends SIGINT first, so a single-user server hung until it was killed.

There we route SIGINT to the server's own SIGTERM handler (as JupyterHub's single-user
app does for its interactive one): runs are ended and saved, kernels shut down, exit.
"""

from __future__ import annotations

import logging
import signal
from typing import Any


def stop_on_sigint(serverapp: Any, log: logging.Logger) -> bool:
    """Make SIGINT stop ``serverapp`` as SIGTERM does, if the server owns the signals and
    left SIGINT to Python's default; return whether it did.

    Embedded servers (tests, other applications) keep their own handlers: the server has
    not installed its SIGTERM handler there, and nothing changes.
    """
    stop = getattr(serverapp, "_signal_stop", None)
    if stop is None or signal.getsignal(signal.SIGTERM) != stop:
        return False
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False  # a terminal is there: the server's confirmation prompt stays
    signal.signal(signal.SIGINT, stop)
    log.debug("jupyter-loop: SIGINT stops this server as SIGTERM does (no terminal)")
    return True
