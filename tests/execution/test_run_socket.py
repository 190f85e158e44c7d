"""The runs websocket: a tab's run requests without an HTTP request each
(``execution/run_socket.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from authorizers import both
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError
from tornado.websocket import WebSocketClientConnection

SOCKET = ("api", "jupyter-loop", "runs", "socket")


async def answer(socket: WebSocketClientConnection) -> dict[str, Any]:
    message = await socket.read_message()
    assert isinstance(message, str), "the socket closed"
    answered: dict[str, Any] = json.loads(message)
    return answered


def run_frame(request_id: str, path: str, *cell_ids: str, **extra: Any) -> str:
    run = {"path": path, "cell_ids": list(cell_ids), **extra}
    return json.dumps({"request_id": request_id, "run": run})


async def test_cells_run_in_the_order_the_tab_asked_for_them(
    write_notebook, start_kernel, open_tab, jp_ws_fetch
):
    path = write_notebook(
        "nb.ipynb", "seen = []", "seen.append(1)", "seen.append(2)", "seen.append(3)", "seen"
    )
    kernel_id = await start_kernel(path)
    socket = await jp_ws_fetch(*SOCKET)
    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
        for index in range(5):  # each sent before the one before it is answered
            await socket.write_message(
                run_frame(f"r{index}", path, f"c{index}", kernel_id=kernel_id)
            )
        answers = [await answer(socket) for _ in range(5)]
        assert [a["request_id"] for a in answers] == ["r0", "r1", "r2", "r3", "r4"]
        assert [a["ticket"]["cells"][0]["cell_id"] for a in answers] == [f"c{i}" for i in range(5)]
        assert answers[0]["ticket"]["path"] == path
        await wait_for(lambda: tab.cell("c4").get("execution_count"))
        result = tab.cell("c4")["outputs"][0]["data"]["text/plain"]
        assert result == "[1, 2, 3]"
    socket.close()


async def test_a_bad_request_is_answered_and_the_socket_stays_open(
    write_notebook, start_kernel, open_tab, jp_ws_fetch, read_notebook
):
    path = write_notebook("nb.ipynb", "print('ran')", "1 / 0")
    kernel_id = await start_kernel(path)
    socket = await jp_ws_fetch(*SOCKET)
    await socket.write_message("{not json")
    refused = await answer(socket)
    assert refused["request_id"] is None
    assert refused["error"]["status"] == 400
    assert "not valid JSON" in refused["error"]["message"]

    await socket.write_message(json.dumps({"request_id": "r1", "run": ["nb.ipynb"]}))
    refused = await answer(socket)
    assert refused == {
        "request_id": "r1",
        "error": {
            "status": 400,
            "message": "'run' must be a JSON object: what POST runs takes.",
            "reason": "BadRequest",
        },
    }
    await socket.write_message(json.dumps({"run": {"path": path, "cell_ids": ["c0"]}}))
    assert (await answer(socket))["error"]["message"] == "'request_id' must be a non-empty string."
    await socket.write_message(run_frame("r2", path, "c0", "nope", kernel_id=kernel_id))
    missing = await answer(socket)
    assert missing["request_id"] == "r2"
    assert missing["error"]["status"] == 404

    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
        assert tab.cell("c0").get("execution_count") is None  # nothing of r2 ran
        await socket.write_message(run_frame("r3", path, "c0", kernel_id=kernel_id))
        assert (await answer(socket))["ticket"]["cells"][0]["cell_id"] == "c0"
        await wait_for(lambda: tab.text("c0") == "ran\n")
    assert read_notebook(path)["cells"][1]["source"] == "1 / 0"  # the file lost nothing
    socket.close()


@pytest.mark.parametrize("authorizer", both("ReadOnlyContents"))
async def test_the_socket_needs_the_rights_post_runs_needs(jp_ws_fetch):
    with pytest.raises(HTTPClientError) as refused:
        await jp_ws_fetch(*SOCKET)
    assert refused.value.code == 403


async def test_a_socket_without_a_valid_token_is_refused(jp_ws_fetch):
    with pytest.raises(HTTPClientError) as refused:
        await jp_ws_fetch(*SOCKET, headers={"Authorization": "token not-the-token"})
    assert refused.value.code == 403
