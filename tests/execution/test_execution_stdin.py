"""input() and getpass() from any tab: the prompt lives in the shared document."""

from __future__ import annotations

import json

import pytest
from loop_helpers import wait_for
from pycrdt import Map
from tornado.httpclient import HTTPClientError


def answer(api, path: str, cell_id: str, request_id: str, value: str):
    body = {"path": path, "cell_id": cell_id, "request_id": request_id, "value": value}
    return api("api", "jupyter-loop", "input", method="POST", body=body)


async def test_prompt_shows_in_every_tab_and_either_answers(
    write_notebook, start_kernel, run_cells, open_tab, api
):
    path = write_notebook("ask.ipynb", "name = input('name? ')\nprint('hello', name)")
    await start_kernel(path)
    async with open_tab(path) as first, open_tab(path) as second:
        await run_cells(path, "c0")
        request = await wait_for(lambda: (second.marker("c0") or {}).get("input"))
        assert request["prompt"] == "name? " and request["password"] is False
        assert (first.marker("c0") or {}).get("input") == request
        await answer(api, path, "c0", request["request_id"], "Ada ✓")
        await wait_for(lambda: first.cell("c0").get("execution_count") == 1)
        outputs = first.cell("c0")["outputs"]
        # Echoed as JupyterLab's stdin widget does: the prompt, a space, the answer.
        assert [(o["name"], o["text"]) for o in outputs] == [
            ("stdin", "name?  Ada ✓\n"),
            ("stdout", "hello Ada ✓\n"),
        ]
        assert "input" not in (first.marker("c0") or {})


async def test_a_tab_opened_later_sees_the_pending_prompt(
    write_notebook, start_kernel, run_cells, open_tab, api
):
    path = write_notebook("later.ipynb", "x = input('x? ')")
    await start_kernel(path)
    await run_cells(path, "c0")
    async with open_tab(path) as tab:
        request = await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        await answer(api, path, "c0", request["request_id"], "1")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)


async def test_getpass_hides_the_answer(write_notebook, start_kernel, run_cells, open_tab, api):
    path = write_notebook(
        "secret.ipynb", "import getpass\npw = getpass.getpass('pw: ')\nprint(len(pw))"
    )
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        request = await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        assert request["password"] is True
        await answer(api, path, "c0", request["request_id"], "hunter22")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        assert "hunter22" not in json.dumps(tab.cell("c0")["outputs"])
        assert tab.text("c0").endswith("8\n")


async def test_a_second_answer_to_the_same_prompt_is_409(
    write_notebook, start_kernel, run_cells, open_tab, api
):
    path = write_notebook("twice.ipynb", "a = input('a? ')\nimport time\ntime.sleep(1)")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        request = await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        await answer(api, path, "c0", request["request_id"], "first")
        with pytest.raises(HTTPClientError) as raised:
            await answer(api, path, "c0", request["request_id"], "second")
        assert raised.value.code == 409
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        assert "second" not in tab.text("c0")


async def test_interrupt_cancels_a_pending_prompt(
    write_notebook, start_kernel, run_cells, open_tab, api
):
    path = write_notebook("cancel.ipynb", "input('wait? ')")
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        await api("api", "kernels", kernel_id, "interrupt", method="POST", body="")
        await wait_for(lambda: (tab.marker("c0") or {}).get("status") == "error")
        assert "input" not in (tab.marker("c0") or {})
        assert tab.cell("c0")["execution_state"] == "idle"


async def test_answer_for_a_cell_not_waiting_is_409(write_notebook, start_kernel, api):
    path = write_notebook("idle.ipynb", "1")
    await start_kernel(path)
    with pytest.raises(HTTPClientError) as raised:
        await answer(api, path, "c0", "nope", "x")
    assert raised.value.code == 409


async def test_kernel_death_with_a_prompt_pending_ends_the_prompt(
    write_notebook, start_kernel, run_cells, open_tab, api, kernel_back
):
    source = "import os, threading\nthreading.Timer(1.0, os._exit, (1,)).start()\ninput('wait? ')"
    path = write_notebook("dies.ipynb", source)
    kernel_id = await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        request = await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        await wait_for(lambda: "kernel died" in tab.text("c0"), timeout=40)
        assert "input" not in (tab.marker("c0") or {})
        assert tab.cell("c0")["execution_state"] == "idle"
        with pytest.raises(HTTPClientError) as late:
            await answer(api, path, "c0", request["request_id"], "too late")
        assert late.value.code == 409
        assert "too late" not in tab.text("c0")
    await kernel_back(kernel_id)


async def test_the_prompt_comes_after_the_outputs_printed_before_it(
    write_notebook, start_kernel, run_cells, open_tab, api
):
    # The kernel sends those outputs (IOPub) before the prompt (stdin): no tab may see
    # the prompt with outputs still missing above it.
    source = "from IPython.display import display\nfor i in range(40): display(i)\ninput('go? ')"
    path = write_notebook("ordered.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        outputs_when_asked: list[int] = []
        board = tab.notebook.ydoc.get("jupyter_loop:execution", type=Map)

        def on_board_change(_: object) -> None:
            marker = board.get("c0")
            if not outputs_when_asked and isinstance(marker, dict) and marker.get("input"):
                outputs_when_asked.append(len(tab.cell("c0").get("outputs") or []))

        board.observe(on_board_change)
        await run_cells(path, "c0")
        request = await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        assert outputs_when_asked == [40]
        await answer(api, path, "c0", request["request_id"], "")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
