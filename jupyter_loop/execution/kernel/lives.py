"""Which life of its kernel a kernel line talks to, and which word of a death ends runs.

A kernel that dies and is brought back is heard of up to three times, by different voices
and in no fixed order with the cells a user runs meanwhile:

- the line's own liveness check finds the process gone (``found_dead``);
- jupyter_client's restarter says it starts the kernel again (``restarter_restarts``),
  or that it gave up (``died``); a gateway says the same on IOPub;
- the server's ``restart`` kernel action follows *every* restart once it is done, the
  restarter's as well as one a user asked for (``restart_done``).

Only the first word of one death ends runs: the cells run after it went to the kernel's
next life (they wait for it to run, as JupyterLab holds what a tab sends while its kernel
restarts), and a later word about the same death must not cut them off. Each end of a
life gives a new ``kernel_run``: the run history tells a restarted kernel's runs apart by
it.

Rejected: ending runs at every word (what the queue did). A cell run again the moment
the first word marked it "aborted" was then cut off by the second, or by the third when
it already ran on the new process: the user saw a re-run fail for no reason.
"""

from __future__ import annotations

import uuid


def _new_life() -> str:
    return uuid.uuid4().hex


class KernelLives:
    """The kernel's current life, and what a word about its death asks of the line.

    Each word but ``found_dead`` (after which the line ends the runs itself) returns
    whether the line must end its runs now.

    >>> lives = KernelLives()
    >>> lives.found_dead()            # the liveness check: the process is gone
    >>> lives.restarter_restarts()    # then the restarter: that death, heard again
    False
    >>> lives.restart_done()          # then the server's restart action: the same
    False

    A restart a user asked for is heard once, when it is done:

    >>> lives.restart_done()
    True

    The restarter heard first (its runs end), then its restart action:

    >>> lives.restarter_restarts(), lives.restart_done()
    (True, False)
    """

    def __init__(self) -> None:
        self.kernel_run = _new_life()
        """This start of the kernel, as this server saw it (a restart keeps the kernel's
        id; a kernel that outlived a server restart counts as a new one)."""
        self._found_dead = False  # runs ended; the restarter may still speak of it
        self._restarter_at_work = False  # its "restart" action is still to come

    def found_dead(self) -> None:
        """The liveness check found the process gone (its runs end)."""
        self._found_dead = True
        self.kernel_run = _new_life()

    def restarter_restarts(self) -> bool:
        """jupyter_client's restarter starts the kernel again after it died."""
        self._restarter_at_work = True
        return self._restarted()

    def gateway_restarted(self) -> bool:
        """A gateway says it restarted the kernel (no restart action follows here)."""
        return self._restarted()

    def restart_done(self) -> bool:
        """The server's ``restart`` kernel action: the restarter's (heard already) or
        one a user asked for."""
        if self._restarter_at_work:
            self._restarter_at_work = False
            return False
        return self._ended()

    def died(self) -> bool:
        """The kernel died and nothing brings it back (the restarter gave up)."""
        self._restarter_at_work = False
        return self._ended()

    def running(self) -> None:
        """A connection reached the kernel: whatever restarted it, it is alive again."""
        self._found_dead = False

    def _restarted(self) -> bool:
        if self._found_dead:
            self._found_dead = False
            return False
        return self._ended()

    def _ended(self) -> bool:
        self._found_dead = False
        self.kernel_run = _new_life()
        return True
