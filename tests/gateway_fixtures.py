"""Real kernel gateways (Jupyter Kernel Gateway, Jupyter Enterprise Gateway), and a Jupyter
server whose kernels live on one.

Tests use ``kernel_gateway`` by default; those that must hold on both take the ``gateway``
fixture and are parametrized with ``on_both_gateways``. A test that must hold the same for
the server's own kernels and a gateway's is parametrized with ``on_local_and_gateway``
(``local``: the usual server, no gateway), so the two cannot drift apart.

Enterprise Gateway 3.x needs jupyter_server 1.x and jupyter_client 6.x, which our server
cannot run with, so it lives in a virtual environment of its own (``.venv-eg`` beside the
test's one, made by ``scripts/test``), as it would on a machine of its own; its kernels
run the test's Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.gateway.gateway_client import GatewayClient
from traitlets.config import Config

from jupyter_loop.testing.server_process import free_port

ENTERPRISE_GATEWAY_ENV = "JUPYTER_LOOP_ENTERPRISE_GATEWAY"
"""Overrides where ``jupyter-enterprisegateway`` is (the script in Enterprise Gateway's
virtual environment)."""


@dataclass(frozen=True)
class Gateway:
    kind: str  # "kernel_gateway" or "enterprise_gateway": the fixture's name; or "local"
    url: str


on_both_gateways = pytest.mark.parametrize(
    "gateway", ["kernel_gateway", "enterprise_gateway"], indirect=True
)
on_local_and_gateway = pytest.mark.parametrize(
    "gateway", ["local", "kernel_gateway"], indirect=True
)


def _wait_until_listening(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the gateway exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/api/kernelspecs", timeout=2) as response:
                json.load(response)
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _serve(command: list[str], home: Path, env: dict[str, str], url: str) -> Iterator[str]:
    log = (home / "gateway.log").open("wb")
    process = subprocess.Popen(command, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_until_listening(url, process, timeout=60)
        yield url
    finally:
        process.terminate()  # both gateways shut their kernels down on SIGTERM
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


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
    yield from _serve(command, home, dict(os.environ), f"http://127.0.0.1:{port}")


def enterprise_gateway_script() -> Path:
    given = os.environ.get(ENTERPRISE_GATEWAY_ENV)
    script = (
        Path(given) if given else Path(sys.prefix).parent / ".venv-eg/bin/jupyter-enterprisegateway"
    )
    if not script.is_file():
        pytest.fail(
            f"Enterprise Gateway is not installed at {script}: make its virtual environment "
            "(as scripts/test does: python3 -m venv .venv-eg && .venv-eg/bin/pip install "
            f"jupyter_enterprise_gateway) or set {ENTERPRISE_GATEWAY_ENV}"
        )
    return script


@pytest.fixture(scope="module")
def enterprise_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``jupyter enterprisegateway`` on 127.0.0.1 with its local process proxy: kernels
    are plain local processes of a ``python3`` kernel spec that runs the test's Python."""
    script = enterprise_gateway_script()
    port = free_port()
    home = tmp_path_factory.mktemp("enterprise-gateway")
    spec = home / "share" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    env = {
        **os.environ,
        "JUPYTER_PATH": str(home / "share"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
    }
    command = [
        str(script),
        "--EnterpriseGatewayApp.ip=127.0.0.1", f"--EnterpriseGatewayApp.port={port}",
        "--EnterpriseGatewayApp.port_retries=0",
        # A Jupyter server lists the gateway's kernels (EG answers 403 unless allowed).
        "--EnterpriseGatewayApp.list_kernels=True",
        # EG refuses kernels to the user "root" by default (its unauthorized_users), and
        # the server asks for kernels as the user it runs as: root on CI.
        "--EnterpriseGatewayApp.unauthorized_users=no-such-user",
    ]  # fmt: skip
    yield from _serve(command, home, env, f"http://127.0.0.1:{port}")


@pytest.fixture
def gateway(request: pytest.FixtureRequest) -> Gateway:
    """The gateway a test runs on: the Kernel Gateway unless parametrized (``on_both_gateways``)."""
    kind = str(getattr(request, "param", "kernel_gateway"))
    if kind == "local":
        return Gateway(kind, "")
    return Gateway(kind, str(request.getfixturevalue(kind)))


@pytest.fixture
def jp_server_config(jp_server_config: Config, gateway: Gateway) -> Iterator[Config]:
    """The usual server, its kernels started and reached through the gateway (the usual
    server alone for ``local``)."""
    if gateway.kind == "local":
        yield jp_server_config
        return
    GatewayClient.clear_instance()  # a singleton: each server must configure its own
    config = Config(jp_server_config)
    config.GatewayClient.url = gateway.url
    config.GatewayClient.request_timeout = 60.0
    yield config
    GatewayClient.clear_instance()


def gateway_kernels(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/api/kernels", timeout=10) as response:
        return list(json.load(response))
