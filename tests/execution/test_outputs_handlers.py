"""GET /api/jupyter-loop/outputs/...: the full output behind a marker or a placeholder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError

from jupyter_loop.execution.outputs.budget import METADATA_KEY

LINES = "".join(f"{i}\n" for i in range(20_000))
SOURCE = (
    "from IPython.display import display\n"
    "for i in range(20_000):\n    print(i)\n"
    "display({'application/json': {'n': 1}, 'text/plain': 'j'}, raw=True)"
)


@pytest.fixture
def loop_config(tmp_path: Path) -> dict[str, Any]:
    return {
        "data_dir": str(tmp_path / "loop"),
        "output_budget_bytes": 32 * 1024,
        "full_output_runs_per_cell": 2,
    }


async def long_run(write_notebook, start_kernel, run_cells, open_tab) -> Any:
    """The path and the outputs of a run longer than the budget."""
    path = write_notebook("long.ipynb", SOURCE)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1, timeout=60)
        outputs = tab.cell("c0")["outputs"]
    return path, outputs


def link_of(outputs: list[dict[str, Any]], base_url: str) -> list[str]:
    marker = next(o for o in outputs if METADATA_KEY in o.get("metadata", {}))
    link = marker["metadata"][METADATA_KEY]["full_output"]
    assert link.startswith(base_url)  # an absolute path: JupyterLab leaves such links alone
    assert f'<a href="{link}" target="_blank">' in marker["data"]["text/html"]
    return link[len(base_url) :].split("/")


async def test_the_marker_opens_the_whole_run(
    write_notebook, start_kernel, run_cells, open_tab, jp_fetch, jp_base_url
):
    _, outputs = await long_run(write_notebook, start_kernel, run_cells, open_tab)
    parts = link_of(outputs, jp_base_url)
    response = await jp_fetch(*parts)
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    body = response.body.decode()
    assert body.startswith(LINES)
    assert "\n[display_data 1: application/json, text/plain (" in body
    assert f"): {jp_base_url}api/jupyter-loop/outputs/" in body


async def test_one_output_of_the_run(
    write_notebook, start_kernel, run_cells, open_tab, jp_fetch, jp_base_url
):
    _, outputs = await long_run(write_notebook, start_kernel, run_cells, open_tab)
    parts = link_of(outputs, jp_base_url)
    stream = await jp_fetch(*parts, "0")
    assert stream.body.decode() == LINES
    data = await jp_fetch(*parts, "1")  # by default its largest type
    assert data.headers["Content-Type"] == "application/json"
    assert json.loads(data.body) == {"n": 1}
    plain = await jp_fetch(*parts, "1", params={"mime": "text/plain"})
    assert plain.body == b"j"


async def test_a_missing_type_or_part_is_a_404_with_a_message(
    write_notebook, start_kernel, run_cells, open_tab, jp_fetch, jp_base_url
):
    _, outputs = await long_run(write_notebook, start_kernel, run_cells, open_tab)
    parts = link_of(outputs, jp_base_url)
    for extra, params, message in [
        (["1"], {"mime": "image/png"}, "no 'image/png' data"),
        (["7"], {}, "no output 7"),
    ]:
        with pytest.raises(HTTPClientError) as error:
            await jp_fetch(*parts, *extra, params=params)
        assert error.value.code == 404
        assert message in json.loads(error.value.response.body)["message"]


async def test_a_record_goes_once_its_cell_ran_as_often_as_runs_are_kept(
    write_notebook, start_kernel, run_cells, open_tab, jp_fetch, jp_base_url
):
    path, outputs = await long_run(write_notebook, start_kernel, run_cells, open_tab)
    parts = link_of(outputs, jp_base_url)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")  # full_output_runs_per_cell = 2: this one and the last
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 2, timeout=60)
    await jp_fetch(*parts)
    await run_cells(path, "c0")
    with pytest.raises(HTTPClientError) as error:
        await wait_for_gone(jp_fetch, parts)
    assert "the last 2 runs of a cell" in json.loads(error.value.response.body)["message"]


async def wait_for_gone(jp_fetch: Any, parts: list[str]) -> None:
    """Fetch until the record is gone (raises then); it goes once the next run's record
    opens, or that run ends (see ``RunRecord``), not at once."""
    for _ in range(300):
        await jp_fetch(*parts)  # raises once the record is gone
        await asyncio.sleep(0.1)


async def test_unknown_or_malformed_ids_are_404(jp_fetch):
    with pytest.raises(HTTPClientError) as error:
        await jp_fetch("api", "jupyter-loop", "outputs", "f", "c", "nope")
    assert error.value.code == 404
    with pytest.raises(HTTPClientError) as error:
        await jp_fetch("api", "jupyter-loop", "outputs", "f", "..", "r")
    assert error.value.code == 404


async def test_it_needs_authentication(jp_fetch):
    with pytest.raises(HTTPClientError) as error:
        await jp_fetch(
            "api", "jupyter-loop", "outputs", "f", "c", "r", headers={"Authorization": ""}
        )
    assert error.value.code == 403


HYPERLINKED = (
    "for i in range(20_000):\n    print(i)\n"
    r"raise ValueError('see \x1b]8;;file:///tmp/x.py\x1b\\x.py\x1b]8;;\x1b\\ \x1b[31mnow\x1b[0m')"
)


async def test_a_kept_error_is_served_without_any_terminal_escape(
    write_notebook, start_kernel, run_cells, open_tab, jp_fetch, jp_base_url
):
    """Hyperlinks (OSC 8, as newer IPython prints file names) go too, not only colours."""
    path = write_notebook("link.ipynb", HYPERLINKED)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1, timeout=60)
        outputs = tab.cell("c0")["outputs"]
    parts = link_of(outputs, jp_base_url)
    error = (await jp_fetch(*parts, "1")).body.decode()
    assert error.rstrip().endswith("ValueError: see x.py now")
    assert "\x1b" not in error


async def test_a_cells_earlier_record_goes_after_its_next_run_not_as_it_starts(
    tmp_path, write_notebook, start_kernel, run_cells, open_tab
):
    """Removing the earlier records at a run's start held the event loop while the kernel
    ran the cell (a trivial cell over the runs socket: its reply read ms late, see
    ``RunRecord``): they go once the new record opens, or the run ends."""
    path = write_notebook("slow.ipynb", "import time\ntime.sleep(1.5)\nprint('done')")
    await start_kernel(path)
    cells = tmp_path / "loop" / "outputs"
    async with open_tab(path) as tab:
        for count in (1, 2, 3):
            await run_cells(path, "c0")
            await wait_for(lambda: tab.cell("c0").get("execution_count") is None, timeout=60)
            running = sorted(run.name for run in cells.glob("*/c0/*"))
            await wait_for(lambda n=count: tab.cell("c0").get("execution_count") == n, timeout=60)
            # full_output_runs_per_cell = 2: the runs before this one are all still there
            # while it runs; once it ended, this one and the last.
            assert len(running) == min(count - 1, 2), running
            await wait_for(lambda n=count: len(list(cells.glob("*/c0/*"))) == min(n, 2))
