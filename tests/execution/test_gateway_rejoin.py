"""Gateway kernels live outside the server: after a crash of the server, the restarted one
takes the runs in flight on them up again (a real Kernel Gateway and a real Enterprise
Gateway, a real server process)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from gateway_fixtures import (  # noqa: F401 (fixtures)
    Gateway,
    enterprise_gateway,
    gateway,
    kernel_gateway,
    on_both_gateways,
)
from kept_helpers import LINES, LOOP, ended_in_file, lines_seen, printed, run, started
from loop_fixtures import Serve
from tornado.websocket import WebSocketClientConnection, websocket_connect


@pytest.mark.timeout(240)
@on_both_gateways
async def test_a_run_on_a_gateway_kernel_goes_on_after_a_server_crash(
    loop_serve: Serve,
    gateway: Gateway,  # noqa: F811
):
    server = loop_serve(f"--GatewayClient.url={gateway.url}", "--GatewayClient.request_timeout=60")
    kernel_id = await started(server, "x = 41", LOOP, "print(x + 1)")
    await run(server, "c0", "c1")
    await lines_seen(server, 20)
    server.crash()
    await asyncio.sleep(2)  # ~40 lines printed with no server up: the gateway keeps them

    server.start()
    await server.ready()
    done = await ended_in_file(server, 1, timeout=90)
    lines = printed(done.cells[1].outputs)
    # In order, none doubled, to the end; the gateway kept what the kernel printed while
    # no server was up (~150 lines). Lost at most: what reached the dead server after
    # its output journal's last commit, which the cell says where it happened.
    assert lines == sorted(set(lines)) and lines[-1] == LINES - 1
    missing = sorted(set(range(LINES)) - set(lines))
    assert len(missing) <= 20, missing
    texts = [o.get("text", "") for o in done.cells[1].outputs]
    note = next(i for i, text in enumerate(texts) if "restarted while this cell ran" in text)
    assert "could not be recovered" not in texts[note]  # the gateway kept them: "may be"
    assert max(printed(done.cells[1].outputs[:note]), default=-1) < min(missing or [LINES])
    assert min(printed(done.cells[1].outputs[note:])) > max(missing or [-1])
    kernels = await server.api("api", "kernels")
    assert [kernel["id"] for kernel in kernels] == [kernel_id]
    await run(server, "c2")  # the same kernel: x is still defined
    after = await ended_in_file(server, 2)
    assert after.cells[2].outputs[0]["text"] == "42\n"
    server.kill()


@asynccontextmanager
async def watching(url: str, kernel_id: str) -> AsyncIterator[None]:
    """Another client of the kernel, straight on the gateway (a notebook client, a second
    server): its websocket stays open while the server is down."""
    url = url.replace("http", "ws", 1)
    socket = await websocket_connect(f"{url}/api/kernels/{kernel_id}/channels?session_id=watcher")
    drained = asyncio.ensure_future(_drain(socket))
    try:
        yield
    finally:
        socket.close()
        await asyncio.wait({drained}, timeout=5)


async def _drain(socket: WebSocketClientConnection) -> None:
    while await socket.read_message() is not None:
        pass


@pytest.mark.timeout(240)
# On Enterprise Gateway alone (40 s a run): the Kernel Gateway keeps and hands back
# messages with the same jupyter_server code (1.x in EG, 2.x in KG), tested above.
@pytest.mark.parametrize("gateway", ["enterprise_gateway"], indirect=True)
async def test_output_the_gateway_kept_for_another_client_is_said_lost(
    loop_serve: Serve,
    gateway: Gateway,  # noqa: F811
):
    server = loop_serve(f"--GatewayClient.url={gateway.url}", "--GatewayClient.request_timeout=60")
    kernel_id = await started(server, "x = 41", LOOP, "print(x + 1)")
    await run(server, "c0", "c1")
    async with watching(gateway.url, kernel_id):
        await lines_seen(server, 20)
        server.crash()  # the gateway keeps messages only when a kernel's last websocket
        await asyncio.sleep(2)  # closes: the watcher's stays open, so it keeps none
        server.start()
        await server.ready()
        done = await ended_in_file(server, 1, timeout=90)
    lines = printed(done.cells[1].outputs)
    assert lines == sorted(set(lines)) and lines[-1] == LINES - 1
    missing = sorted(set(range(LINES)) - set(lines))
    assert len(missing) >= 40, missing  # ~2 s with no server up, at 20 lines a second
    texts = [o.get("text", "") for o in done.cells[1].outputs]
    note = next(i for i, text in enumerate(texts) if "restarted while this cell ran" in text)
    assert "could not be recovered" in texts[note], texts[note]
    assert max(printed(done.cells[1].outputs[:note])) < missing[0]
    assert min(printed(done.cells[1].outputs[note:])) > missing[-1]
    await run(server, "c2")  # the same kernel, taken back: x is still defined
    after = await ended_in_file(server, 2)
    assert after.cells[2].outputs[0]["text"] == "42\n"
    server.kill()
