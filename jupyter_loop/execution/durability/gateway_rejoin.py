"""Gateway kernels after a server restart: taken back, so their runs in flight go on.

A kernel on a Kernel Gateway or Enterprise Gateway does not end with the Jupyter server:
after a crash it still runs the cell it was given. The server that comes back knows the
kernel only from the run ledger; jupyter_server's gateway kernel manager takes an existing
kernel back under its own id when asked to "start" it with that id (it asks the gateway
for the kernel's model instead of creating one). Then tabs, the notebook's session and
the run queue find the kernel as before, and the run is followed again (``kept_runs``):
its cell gets back what the output journal holds, then what the gateway kept for our
session while no server listened (``kernel.gateway_link``), then the kernel's live messages.

Whether the gateway kept anything for us shows in the kernel's model as we take it back:
a gateway (jupyter_server's kernel manager) starts keeping a kernel's messages only when
the kernel's last websocket closes, and a websocket opening after that takes or drops
what was kept. So a kernel that has websockets open when we come back (another client
straight on the gateway, or one that reached it first) had nothing kept for us: what it
printed while no server was up is lost, and the cell says so plainly (``kept_runs``).

Rejected: leaving the runs closed as cut off (what a restart did) while the kernel goes
on running them, its further output lost and the cells queued behind never run.
Rejected for the "nothing kept" test: telling kept from live messages by their header
dates (they come from the kernel's clock, which need not match the server's).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from jupyter_server.gateway.managers import GatewayMappingKernelManager


@dataclass(frozen=True)
class RejoinedKernels:
    """Gateway kernels taken back after a restart."""

    kernel_ids: frozenset[str] = frozenset()
    kept_nothing: frozenset[str] = frozenset()
    """Those with websockets open when taken back: the gateway kept no output for us."""


async def rejoin_gateway_kernels(
    kernel_ids: set[str], kernels: Any, log: logging.Logger
) -> RejoinedKernels:
    """Take back the gateway kernels among ``kernel_ids`` that the gateway still runs
    (none when the server's kernels are not on a gateway)."""
    if not isinstance(kernels, GatewayMappingKernelManager):
        return RejoinedKernels()
    rejoined: set[str] = set()
    kept_nothing: set[str] = set()
    for kernel_id in sorted(kernel_ids):
        if kernel_id not in kernels:
            try:
                await kernels.start_kernel(kernel_id=kernel_id)
            except Exception as e:  # gone from the gateway (culled, shut down): closed
                log.info("jupyter-loop: gateway kernel %s is gone: %s", kernel_id, e)
                continue
            log.info("jupyter-loop took back gateway kernel %s", kernel_id)
        # A kernel known already (listed from the gateway: a tab asked first) has a model too.
        if _connections(kernels.get_kernel(kernel_id)) > 0:
            kept_nothing.add(kernel_id)
        rejoined.add(kernel_id)
    return RejoinedKernels(frozenset(rejoined), frozenset(kept_nothing))


def _connections(manager: Any) -> int:
    """Websockets open to the kernel, as the gateway's model of it says (0 if it does not
    say: a gateway not built on jupyter_server)."""
    model = getattr(manager, "kernel", None)
    count = model.get("connections") if isinstance(model, dict) else None
    return count if isinstance(count, int) else 0
