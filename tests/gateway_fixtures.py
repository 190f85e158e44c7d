"""A real Jupyter Kernel Gateway, and a Jupyter server whose kernels live on it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_server.gateway.gateway_client import GatewayClient
from traitlets.config import Config

from jupyter_loop.testing.server_process import free_port


def _wait_until_listening(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the kernel gateway exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/api/kernelspecs", timeout=2) as response:
                json.load(response)
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.fixture(scope="module")
def kernel_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``jupyter kernelgateway`` on 127.0.0.1 (listing kernels, as a Jupyter server needs)."""
    port = free_port()
    home = tmp_path_factory.mktemp("gateway")
    command = [
        sys.executable, "-m", "jupyter", "kernelgateway",
        "--KernelGatewayApp.ip=127.0.0.1", f"--KernelGatewayApp.port={port}",
        "--KernelGatewayApp.port_retries=0",
        "--JupyterWebsocketPersonality.list_kernels=True",
    ]  # fmt: skip
    log = (home / "gateway.log").open("wb")
    process = subprocess.Popen(command, cwd=home, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_listening(url, process, timeout=60)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture
def jp_server_config(jp_server_config: Config, kernel_gateway: str) -> Iterator[Config]:
    """The usual server, its kernels started and reached through the gateway."""
    GatewayClient.clear_instance()  # a singleton: each server must configure its own
    config = Config(jp_server_config)
    config.GatewayClient.url = kernel_gateway
    config.GatewayClient.request_timeout = 60.0
    yield config
    GatewayClient.clear_instance()


def gateway_kernels(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/api/kernels", timeout=10) as response:
        return list(json.load(response))
