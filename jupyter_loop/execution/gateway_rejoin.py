"""Gateway kernels after a server restart: taken back, so their runs in flight go on.

A kernel on a Kernel Gateway or Enterprise Gateway does not end with the Jupyter server:
after a crash it still runs the cell it was given. The server that comes back knows the
kernel only from the run ledger; jupyter_server's gateway kernel manager takes an existing
kernel back under its own id when asked to "start" it with that id (it asks the gateway
for the kernel's model instead of creating one). Then tabs, the notebook's session and
the run queue find the kernel as before, and the run is followed again (``kept``):
its cell gets back what the output journal holds, then what the gateway kept for our
session while no server listened (``gateway_link``), then the kernel's live messages.

Rejected: leaving the runs closed as cut off (what a restart did) while the kernel goes
on running them, its further output lost and the cells queued behind never run.
"""

from __future__ import annotations

import logging
from typing import Any

from jupyter_server.gateway.managers import GatewayMappingKernelManager


async def rejoin_gateway_kernels(
    kernel_ids: set[str], kernels: Any, log: logging.Logger
) -> set[str]:
    """Take back the gateway kernels among ``kernel_ids`` that the gateway still runs;
    return their ids (none when the server's kernels are not on a gateway)."""
    if not isinstance(kernels, GatewayMappingKernelManager):
        return set()
    rejoined: set[str] = set()
    for kernel_id in sorted(kernel_ids):
        if kernel_id not in kernels:
            try:
                await kernels.start_kernel(kernel_id=kernel_id)
            except Exception as e:  # gone from the gateway (culled, shut down): closed
                log.info("jupyter-loop: gateway kernel %s is gone: %s", kernel_id, e)
                continue
            log.info("jupyter-loop took back gateway kernel %s", kernel_id)
        rejoined.add(kernel_id)
    return rejoined
