"""Secrets never reach the shared document or the .ipynb: masking where outputs are written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import wait_for

from jupyter_loop.execution.outputs.masking import OutputMasking
from jupyter_loop.execution.outputs.ops import (
    AppendOutput,
    AppendStream,
    ClearOutputs,
    UpdateDisplay,
)
from jupyter_loop.secrets import DEFAULT_MASK, SecretMasker

CANARY = "canary-7c1e0b9f-env"  # the server's OPENAI_API_KEY: masked by its variable's name
CONFIGURED = "hunter2-configured"  # c.JupyterLoopApp.secrets
M = DEFAULT_MASK


@pytest.fixture
def loop_config(request: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)  # before the server and its kernels start
    config = {"secrets": [CONFIGURED], "data_dir": str(tmp_path / "loop")}
    return {**config, **getattr(request, "param", {})}


def masking() -> OutputMasking:
    return OutputMasking(SecretMasker([CONFIGURED], token_patterns=False))


# -- unit ----------------------------------------------------------------------------------


def test_a_secret_split_over_messages_is_masked() -> None:
    out = masking()
    shown = out.ops(AppendStream("stdout", "pw=hunter2-con"))
    shown += out.ops(AppendStream("stdout", "figured ok\n"))
    assert "".join(op.text for op in shown if isinstance(op, AppendStream)) == f"pw={M} ok\n"


def test_held_back_text_is_released_before_another_output() -> None:
    out = masking()
    assert out.ops(AppendStream("stdout", "almost hunter2-")) == [AppendStream("stdout", "almost ")]
    image = AppendOutput({"output_type": "display_data", "data": {}, "metadata": {}})
    assert out.ops(image) == [AppendStream("stdout", "hunter2-"), image]


def test_held_back_text_is_released_before_a_clear_and_at_a_boundary() -> None:
    out = masking()
    out.ops(AppendStream("stderr", "x hunter"))
    assert out.ops(ClearOutputs(wait=True)) == [
        AppendStream("stderr", "hunter"),
        ClearOutputs(True),
    ]
    out.ops(AppendStream("stdout", "y hunter2"))
    assert out.release() == [AppendStream("stdout", "hunter2")]
    assert out.release() == []


def test_a_display_update_is_masked_and_keeps_the_stream_going() -> None:
    out = masking()
    out.ops(AppendStream("stdout", "hunter2-con"))
    update = out.ops(UpdateDisplay("d", {"text/html": f"<b>{CONFIGURED}</b>"}, {}))
    assert update == [UpdateDisplay("d", {"text/html": f"<b>{M}</b>"}, {})]
    assert out.ops(AppendStream("stdout", "figured\n")) == [AppendStream("stdout", f"{M}\n")]


def test_rich_outputs_and_tracebacks_are_masked() -> None:
    error = {
        "output_type": "error",
        "ename": "ValueError",
        "evalue": CONFIGURED,
        "traceback": [f"ValueError: {CONFIGURED}"],
    }
    (masked,) = masking().ops(AppendOutput(error))
    assert isinstance(masked, AppendOutput)
    assert CONFIGURED not in json.dumps(masked.output)


def test_text_that_masks_to_nothing_yet_makes_no_edit() -> None:
    assert masking().ops(AppendStream("stdout", "hunter2")) == []


# -- end to end ----------------------------------------------------------------------------


def everything(tab: Any, cell_id: str) -> str:
    return json.dumps(tab.cell(cell_id)["outputs"])


async def test_an_environment_secret_printed_by_the_kernel_is_masked(
    write_notebook, read_notebook, start_kernel, run_cells, open_tab, jp_root_dir
):
    path = write_notebook("env.ipynb", 'import os\nprint(os.environ["OPENAI_API_KEY"])')
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        assert tab.text("c0") == f"{M}\n"

    def saved_outputs() -> Any:
        notebook = read_notebook(path)
        return notebook.cells[0].outputs if notebook is not None else None

    outputs = await wait_for(saved_outputs)
    assert outputs[0]["text"] == f"{M}\n"
    assert CANARY not in (jp_root_dir / path).read_text()


async def test_a_configured_secret_in_html_and_in_a_traceback_is_masked(
    write_notebook, read_notebook, start_kernel, run_cells, open_tab, jp_root_dir
):
    source = (  # the secret is made by the kernel: the cell's source does not hold it
        "from IPython.display import HTML, display\n"
        "secret = 'hunter2-' + 'configured'\n"
        "display(HTML(f'<b>{secret}</b>'))\n"
        "raise ValueError(secret)"
    )
    path = write_notebook("rich.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: (tab.marker("c0") or {}).get("status") == "error")
        html, error = tab.cell("c0")["outputs"]
        assert html["data"]["text/html"] == f"<b>{M}</b>"
        assert error["evalue"] == M and any(M in line for line in error["traceback"])
        assert CONFIGURED not in everything(tab, "c0")
    await wait_for(lambda: M in (jp_root_dir / path).read_text())
    assert CONFIGURED not in (jp_root_dir / path).read_text()


async def test_a_secret_printed_in_pieces_across_batches_is_masked(
    write_notebook, start_kernel, run_cells, open_tab
):
    half = len(CONFIGURED) // 2
    source = (
        "import time\n"
        f"print('key: {CONFIGURED[:half]}', end='', flush=True)\n"
        "time.sleep(0.4)\n"
        f"print('{CONFIGURED[half:]} done', flush=True)\n"
        "print('ends with hunter', end='')"
    )
    path = write_notebook("pieces.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        # The tail that could start a secret was held back, and shown at the run's end.
        assert tab.text("c0") == f"key: {M} done\nends with hunter"


async def test_the_input_prompt_and_its_echo_are_masked(
    write_notebook, start_kernel, run_cells, open_tab, api
):
    path = write_notebook("ask.ipynb", f"x = input('paste {CONFIGURED} here: ')")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        request = await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        assert request["prompt"] == f"paste {M} here: "
        body = {
            "path": path,
            "cell_id": "c0",
            "request_id": request["request_id"],
            "value": CONFIGURED,
        }
        await api("api", "jupyter-loop", "input", method="POST", body=body)
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        assert tab.text("c0") == f"paste {M} here:  {M}\n"


@pytest.mark.parametrize("loop_config", [{"mask_secrets": False}], indirect=True)
async def test_masking_can_be_switched_off(write_notebook, start_kernel, run_cells, open_tab):
    path = write_notebook("plain.ipynb", 'import os\nprint(os.environ["OPENAI_API_KEY"])')
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        assert tab.text("c0") == f"{CANARY}\n"
