"""The kernel's variables, read silently by a fixed snippet (real server, real kernel)."""

from __future__ import annotations

import pytest
from loop_helpers import wait_for

from jupyter_loop.errors import Conflict
from jupyter_loop.execution.kernel import introspect

DATA = (
    "import numpy as np, pandas as pd\n"
    "df = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [1.5, 19.0], 'n': [3, 4]})\n"
    "arr = np.zeros((3, 4), dtype='float32')\n"
    "words = ['a', 'b', 'c']\n"
    "ratio = 0.25"
)
SNEAKY = """\
calls = []
class Sneaky:
    def __repr__(self):
        calls.append('repr')
        return 'sneaky'
    def __len__(self):
        calls.append('len')
        return 1
class Frame(pd.DataFrame):
    @property
    def shape(self):
        calls.append('shape')
        return (0, 0)
sneaky = Sneaky()
frame = Frame({'x': [1, 2]})"""
SHOW_CALLS = "print('calls:', calls)"


def service_of(jp_serverapp):
    return jp_serverapp.web_app.settings["jupyter_loop_execution"]


def by_name(report):
    return {variable.name: variable for variable in report.variables}


async def test_dataframes_arrays_and_builtins_are_described(
    write_notebook, start_kernel, run_cells, open_tab, jp_serverapp
):
    path = write_notebook("vars.ipynb", DATA)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        found = by_name(await service_of(jp_serverapp).variables(path))
    assert set(found) == {"df", "arr", "words", "ratio"}  # no modules, no IPython names
    df = found["df"]
    assert df.type == "pandas.DataFrame" and df.shape == (2, 3)
    assert [name for name, _ in df.columns] == ["city", "temp", "n"]
    assert dict(df.columns)["temp"] == "float64" and dict(df.columns)["n"] == "int64"
    assert found["arr"].shape == (3, 4) and found["arr"].dtype == "float32"
    assert found["words"].type == "list" and found["words"].length == 3
    assert found["ratio"].repr == "0.25"
    text = introspect.describe(await service_of(jp_serverapp).variables(path))
    assert "df: pandas.DataFrame 2×3, columns city" in text


async def test_no_user_code_runs_and_nothing_reaches_the_notebook(
    write_notebook, start_kernel, run_cells, open_tab, jp_serverapp
):
    path = write_notebook("sneaky.ipynb", DATA, SNEAKY, SHOW_CALLS)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0", "c1")
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 2)
        before = [tab.cell(cell_id) for cell_id in ("c0", "c1", "c2")]
        found = by_name(await service_of(jp_serverapp).variables(path))
        await service_of(jp_serverapp).variables(path)
        assert found["sneaky"].type == "__main__.Sneaky"
        assert found["sneaky"].repr is None and found["sneaky"].length is None
        assert found["frame"].shape == (2, 1)  # pandas' own shape, not the override
        assert [tab.cell(cell_id) for cell_id in ("c0", "c1", "c2")] == before

        await run_cells(path, "c2")
        await wait_for(lambda: tab.cell("c2").get("execution_count"))
        assert tab.cell("c2")["execution_count"] == 3  # the two reads took no count
        assert tab.text("c2") == "calls: []\n"


async def test_a_busy_kernel_is_not_read(
    write_notebook, start_kernel, run_cells, open_tab, api, jp_serverapp
):
    path = write_notebook("busy.ipynb", "answer = input('wait? ')", "x = 1")
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        request = await wait_for(lambda: (tab.marker("c0") or {}).get("input"))
        with pytest.raises(Conflict, match="busy"):
            await service_of(jp_serverapp).variables(path)
        body = {"path": path, "cell_id": "c0", "request_id": request["request_id"], "value": "1"}
        await api("api", "jupyter-loop", "input", method="POST", body=body)
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
    assert by_name(await service_of(jp_serverapp).variables(path))["answer"].repr == "'1'"


async def test_a_notebook_without_a_kernel_says_so(write_notebook, jp_serverapp):
    path = write_notebook("nokernel.ipynb", "x = 1")
    with pytest.raises(Conflict, match="no running kernel"):
        await service_of(jp_serverapp).variables(path)


class TestSecrets:
    CANARY = "canary-" + "7f3a9c" * 14  # longer than the shown start of a string

    @pytest.fixture
    def loop_config(self):
        return {"secrets": [self.CANARY]}

    async def test_a_secret_in_a_string_is_masked_before_it_is_cut(
        self, write_notebook, start_kernel, run_cells, open_tab, jp_serverapp
    ):
        source = f"token = 'Bearer {self.CANARY} and more'"
        path = write_notebook("secret.ipynb", source)
        await start_kernel(path)
        async with open_tab(path) as tab:
            await run_cells(path, "c0")
            await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        text = introspect.describe(await service_of(jp_serverapp).variables(path))
        assert "token: str len" in text and "'Bearer •••••• and more'" in text
        assert self.CANARY[:20] not in text


class TestAsSoonAsARunShowsDone:
    """A tab shows a run done (its count) when the run's end is written, and that writing
    may go on, waiting for a save the run's end asked for: the variables are there to read
    all the while (they said "the kernel is busy" until the save ended: on CI, with two
    servers' tests side by side, the reads just above failed so)."""

    @pytest.fixture
    def jp_server_config(self, jp_server_config):
        jp_server_config.ServerApp.contents_manager_class = (
            "contents_managers.DelayedSavesContentsManager"
        )
        jp_server_config.DelayedSavesContentsManager.save_delay = 3.0
        return jp_server_config

    @pytest.fixture
    def loop_config(self):
        return {"save_interval": 0.2}

    async def test_the_variables_are_read_while_the_runs_end_waits_for_a_save(
        self, notebook_in_tab, run_cells, jp_serverapp
    ):
        # A line first, then a pause past the save interval: the run's end saves.
        source = "import time\nprint('start', flush=True)\ntime.sleep(0.6)\nanswer = 42"
        async with notebook_in_tab("slow-save.ipynb", source) as (path, tab):
            await run_cells(path, "c0")
            await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
            report = await service_of(jp_serverapp).variables(path)
        assert by_name(report)["answer"].repr == "42"
