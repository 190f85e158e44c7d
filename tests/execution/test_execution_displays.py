"""Display updates and clear_output, end to end."""

from __future__ import annotations

import pytest
from loop_helpers import wait_for


async def test_display_handle_updates_in_place_across_cells(
    write_notebook, start_kernel, run_cells, open_tab
):
    path = write_notebook(
        "displays.ipynb",
        "h = display('a', display_id=True)\nprint('after')",
        "h.update('b')",
    )
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        await run_cells(path, "c1")
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 2)
        await wait_for(lambda: tab.cell("c0")["outputs"][0]["data"]["text/plain"] == "'b'")
        outputs = tab.cell("c0")["outputs"]
        assert [o["output_type"] for o in outputs] == ["display_data", "stream"]
        assert outputs[1]["text"] == "after\n"
        assert tab.cell("c1")["outputs"] == []


async def test_clear_output_wait_leaves_the_last_frame(
    write_notebook, start_kernel, run_cells, open_tab
):
    source = (
        "from IPython.display import clear_output\nimport time\n"
        "for i in range(20):\n    clear_output(wait=True)\n    print('frame', i)\n"
        "    time.sleep(0.02)"
    )
    path = write_notebook("frames.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        seen: list[int] = []
        tab.notebook.ycells.observe_deep(lambda _: seen.append(len(tab.cell("c0")["outputs"])))
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        assert tab.cell("c0")["outputs"] == [
            {"output_type": "stream", "name": "stdout", "text": "frame 19\n"}
        ]
        # After the first frame the cell is never seen empty: no flicker.
        first_frame = seen.index(1)
        assert 0 not in seen[first_frame:]


async def test_output_widget_captures_stay_out_of_the_cell(
    write_notebook, start_kernel, run_cells, open_tab
):
    source = (
        "import ipywidgets as w\nout = w.Output()\ndisplay(out)\n"
        "with out:\n    print('inside the widget')\nprint('in the cell')"
    )
    path = write_notebook("widget.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        outputs = tab.cell("c0")["outputs"]
        assert outputs[0]["output_type"] == "display_data"
        assert "application/vnd.jupyter.widget-view+json" in outputs[0]["data"]
        assert tab.text("c0") == "in the cell\n"


async def test_set_next_input_inserts_a_cell_below(
    write_notebook, start_kernel, run_cells, open_tab
):
    path = write_notebook("payload.ipynb", "get_ipython().set_next_input('x = 41 + 1')", "print(1)")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.notebook.cell_number == 3)
        sources = [str(cell["source"]) for cell in tab.notebook.ycells]
        assert sources[1:] == ["x = 41 + 1", "print(1)"]


@pytest.mark.parametrize("loop_config", [{"batch_interval": 30.0}])
async def test_a_display_update_waiting_for_its_batch_is_written_when_the_server_stops(
    jp_serverapp, write_notebook, start_kernel, run_cells, open_tab
):
    path = write_notebook("late.ipynb", "h = display('a', display_id=True)", "h.update('b')")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        await run_cells(path, "c1")  # its end writes c1 at once; c0's update waits 30 s
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 2)
        await jp_serverapp.web_app.settings["jupyter_loop_execution"].stop()
        await wait_for(lambda: tab.cell("c0")["outputs"][0]["data"]["text/plain"] == "'b'", 5)
