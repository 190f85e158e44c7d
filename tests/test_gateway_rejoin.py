"""Gateway kernels live outside the server: after a crash of the server, the restarted one
takes the runs in flight on them up again (a real Kernel Gateway and a real Enterprise
Gateway, a real server process)."""

from __future__ import annotations

import asyncio

import pytest
from gateway_fixtures import (  # noqa: F401 (fixtures)
    Gateway,
    enterprise_gateway,
    gateway,
    kernel_gateway,
    on_both_gateways,
)
from kept_helpers import LINES, LOOP, Serve, ended_in_file, lines_seen, printed, run, started


@pytest.mark.timeout(240)
@on_both_gateways
async def test_a_run_on_a_gateway_kernel_goes_on_after_a_server_crash(
    serve: Serve,
    gateway: Gateway,  # noqa: F811
):
    server = serve(f"--GatewayClient.url={gateway.url}", "--GatewayClient.request_timeout=60")
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
    assert max(printed(done.cells[1].outputs[:note]), default=-1) < min(missing or [LINES])
    assert min(printed(done.cells[1].outputs[note:])) > max(missing or [-1])
    kernels = await server.api("api", "kernels")
    assert [kernel["id"] for kernel in kernels] == [kernel_id]
    await run(server, "c2")  # the same kernel: x is still defined
    after = await ended_in_file(server, 2)
    assert after.cells[2].outputs[0]["text"] == "42\n"
    server.kill()
