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
import threading
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


def release_worker_threads_at_exit() -> None:
    """Let the interpreter exit although AnyIO worker threads still wait for work.

    The collaboration store's SQLite calls run in AnyIO worker threads. AnyIO stops a
    worker when the task it counts as the root ends; under tornado's event loop that is
    whichever task first asked (a room's, which lives as long as the room). When the
    server stops, the event loop stops with such a task pending, the worker waits on its
    queue for good, and Python, which joins every non-daemon thread before it exits, hangs
    after "Deleting all rooms." (seen in the chaos suite: a SIGTERM that never ended).
    Registered with ``threading``'s own exit hooks, which run before that join, it asks
    each worker to stop once it is done with what it is doing (AnyIO's own stop: ``None``
    on its queue). It changes nothing while the server runs.

    Rejected: making the workers daemon threads (they are started by AnyIO, and a daemon
    thread killed in the middle of a SQLite write could leave a hot journal behind).
    """
    register = getattr(threading, "_register_atexit", None)
    if register is None or _released[0]:
        return
    _released[0] = True
    register(_stop_idle_workers)


_released = [False]


def _stop_idle_workers() -> None:
    try:
        from anyio._backends._asyncio import WorkerThread
    except ImportError:  # another AnyIO layout: nothing we know how to stop
        return
    for thread in threading.enumerate():
        if isinstance(thread, WorkerThread):
            thread.queue.put(None)  # a busy worker takes it after its work: exit joins it
