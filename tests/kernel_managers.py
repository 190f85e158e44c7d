"""Kernel managers set into a test server's config (``ServerApp.kernel_manager_class``).

They are real Jupyter kernel managers with one behaviour changed, so a test can see what
jupyter-loop does when a kernel misbehaves in a way no real kernel can be asked to:

* :class:`BrokenClientKernels`: connecting a client to a kernel raises ``TypeError``
  (as a ``GatewayKernelClient`` does when built like a ZMQ client);
* :class:`BrokenExecuteKernels`: a connected client fails to send an execute request;
* :class:`GatedKernels`: kernels do not start until a gate file exists, and the session
  request returns at once (pending kernels), so a run waits for its kernel.
* :class:`LoopBlockingKernels`: the first kernel start holds the server's event loop for
  ``block_seconds`` (a blocking call in a callback, as a slow plugin makes).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_server.services.kernels.kernelmanager import (
    AsyncMappingKernelManager,
    ServerKernelManager,
)
from traitlets import Float, Type, Unicode, default


class BrokenClient(AsyncKernelClient):
    def start_channels(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("start_channels() is broken in this kernel client")


class BrokenClientKernel(ServerKernelManager):
    @default("client_factory")
    def _default_client_factory(self) -> type:
        return BrokenClient


class BrokenClientKernels(AsyncMappingKernelManager):
    @default("kernel_manager_class")
    def _default_kernel_manager_class(self) -> str:
        return "kernel_managers.BrokenClientKernel"


class BrokenShellChannel(AsyncZMQSocketChannel):
    def send(self, msg: dict[str, Any]) -> None:
        if msg["header"]["msg_type"] == "execute_request":
            raise TypeError("execute() is broken in this kernel client")
        super().send(msg)


class BrokenExecuteClient(AsyncKernelClient):
    shell_channel_class = Type(BrokenShellChannel)  # type: ignore[assignment]


class BrokenExecuteKernel(ServerKernelManager):
    @default("client_factory")
    def _default_client_factory(self) -> type:
        return BrokenExecuteClient


class BrokenExecuteKernels(AsyncMappingKernelManager):
    @default("kernel_manager_class")
    def _default_kernel_manager_class(self) -> str:
        return "kernel_managers.BrokenExecuteKernel"


class GatedKernel(ServerKernelManager):
    gate = Unicode("", config=True, help="The kernel starts once this file exists.")

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        while self.gate and not Path(self.gate).exists():
            await asyncio.sleep(0.05)
        await super()._async_launch_kernel(kernel_cmd, **kw)


class GatedKernels(AsyncMappingKernelManager):
    @default("kernel_manager_class")
    def _default_kernel_manager_class(self) -> str:
        return "kernel_managers.GatedKernel"

    @default("use_pending_kernels")
    def _default_use_pending_kernels(self) -> bool:
        return True


class LoopBlockingKernels(AsyncMappingKernelManager):
    block_seconds = Float(1.5, config=True, help="Seconds the first start blocks the loop.")

    async def start_kernel(self, *args: Any, **kwargs: Any) -> str:
        if not getattr(self, "_blocked_once", False):
            self._blocked_once = True
            time.sleep(self.block_seconds)  # on the event loop: nothing else runs meanwhile
        return str(await super().start_kernel(*args, **kwargs))
