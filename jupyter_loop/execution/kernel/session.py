"""Our session id for a kernel: the same from one server start to the next.

A kernel answers a request to the connection that sent it, known by its session id: a
local kernel sends a run's ``input()`` prompts to the ZeroMQ identity of the client that
sent the cell (jupyter_client makes the session id that identity), and a gateway keeps a
closed websocket's messages for the next websocket of its session. A server that follows
a kept kernel's run again after a restart must be that connection, so its session id is
the previous server's: derived from the kernel, never drawn at random. Rejected: storing
each run's session in the run ledger: every connection of ours to the kernel would still
have to take the old id, and one rule for all of them says it once.
"""

from __future__ import annotations

import getpass
import socket
import uuid


def stable_session(kernel_id: str) -> str:
    """Our session id for a kernel: the same for every start of a server of this user on
    this machine, and no browser's.

    >>> stable_session("k1") == stable_session("k1") != stable_session("k2")
    True
    """
    owner = f"jupyter-loop:{getpass.getuser()}@{socket.gethostname()}:{kernel_id}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, owner))
