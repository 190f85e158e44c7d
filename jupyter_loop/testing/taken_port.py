"""A kernel provisioner whose first start of each kernel is given a port another process
holds: the race a busy server meets now and then (jupyter_client picks free ports and
closes them; the kernel binds them a second later), made certain. Set through the
server's configuration, as a fault is injected here: ``register()``, then ``NAME`` as the
``KernelProvisionerFactory``'s default provisioner."""

from __future__ import annotations

import socket
from importlib.metadata import EntryPoint
from typing import Any

from jupyter_client.connect import LocalPortCache
from jupyter_client.provisioning import KernelProvisionerFactory

from ..keeper.provisioner import PORT_NAMES, KeeperProvisioner

NAME = "jupyter-loop-taken-port"

_HELD: list[socket.socket] = []  # the ports taken, held as long as the server runs


def register() -> None:
    """Make the provisioner known to jupyter_client in this process (the server's)."""
    factory = KernelProvisionerFactory
    entry = f"{__name__}:TakenPortProvisioner"
    factory.provisioners[NAME] = EntryPoint(NAME, entry, factory.GROUP_NAME)


def taken_port() -> int:
    """A port of 127.0.0.1 that a listening socket of this process holds."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    _HELD.append(holder)
    return int(holder.getsockname()[1])


class TakenPortProvisioner(KeeperProvisioner):
    """The keeper's provisioner, but a kernel's first start gets a taken IOPub port."""

    _given_taken = False

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        manager = self.parent
        if not self._given_taken and manager is not None:
            self._given_taken = True
            cache = LocalPortCache.instance()
            for name in PORT_NAMES:
                setattr(manager, name, cache.find_available_port(manager.ip))
            manager.iopub_port = taken_port()
            self.ports_cached = True  # jupyter_client takes these as the ports it chose
        return await super().pre_launch(**kwargs)
