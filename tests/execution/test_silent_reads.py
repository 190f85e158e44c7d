"""Reading a kernel's variables runs none of the user's code and never piles requests up in
the kernel (issue 18, defect 8). Real server, real kernel, real completion requests against
the scripted model server.

The notebook counts, from inside the kernel, the silent reads that reach it (IPython's
``user_expressions``, which answers the expressions of every execute request) and every
call into a metaclass whose ``__eq__`` sleeps half a second, and into a DataFrame subclass's
``__getattribute__``. While another client keeps the kernel busy, five completions ask for
the variables: one read may reach the kernel, the others wait for its answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_helpers import openai_config
from completion_helpers import COMPLETION
from loop_helpers import wait_for

from jupyter_loop.testing import say

PROBE = """\
import time
import pandas as pd
reads, touched = [], []
ip = get_ipython()
answer_expressions = ip.user_expressions
def counted(expressions):
    if expressions:  # every execute request has some, empty for a cell
        reads.append(sorted(expressions))
    return answer_expressions(expressions)
ip.user_expressions = counted
class Meta(type):
    def __eq__(cls, other):
        touched.append("__eq__")
        time.sleep(0.5)
        return type.__eq__(cls, other)
    def __hash__(cls):
        touched.append("__hash__")
        return type.__hash__(cls)
    def __getattribute__(cls, name):
        touched.append("meta." + name)
        return type.__getattribute__(cls, name)
class Thing(metaclass=Meta):
    pass
class Frame(pd.DataFrame):
    def __getattribute__(self, name):
        touched.append("frame." + name)
        return super().__getattribute__(name)
thing = Thing()
frame = Frame({"x": [1, 2]})
touched.clear()"""
REPORT = "print(len(reads), sorted(set(touched)))"
BUSY_SECONDS = 4


@pytest.fixture
def loop_config(loop_model_server: Any) -> dict[str, Any]:
    return openai_config(loop_model_server, completion_model="scripted-plain")


async def test_completions_send_one_read_at_a_time_and_run_no_user_code(
    jp_fetch: Any,
    jp_serverapp: Any,
    write_notebook: Any,
    start_kernel: Any,
    run_cells: Any,
    open_tab: Any,
    loop_model_server: Any,
) -> None:
    path = write_notebook("meta.ipynb", PROBE, REPORT, "x = 1")
    kernel_id = await start_kernel(path)
    loop_model_server.set_default_reply(say("1"))
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1, timeout=60)
        # Another client (a console) keeps the kernel busy: a read sent now waits.
        manager = jp_serverapp.kernel_manager.get_kernel(kernel_id)
        console = manager.client_factory(connection_file=manager.connection_file, parent=manager)
        console.load_connection_info(manager.get_connection_info(session=False))
        console.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        try:
            await console.wait_for_ready(timeout=60)
            msg_id = console.execute(f"time.sleep({BUSY_SECONDS})")
            for number in range(5):
                body = {
                    "path": path,
                    "cell_id": "c2",
                    "editor_id": f"tab:{number}",
                    "before": "x",
                    "after": "",
                }
                await jp_fetch(*COMPLETION, "stream", method="POST", body=json.dumps(body))
            while (await console.get_shell_msg(timeout=60))["parent_header"]["msg_id"] != msg_id:
                pass
        finally:
            console.stop_channels()
        await run_cells(path, "c1")
        # The console's cell took execution count 2.
        await wait_for(lambda: tab.cell("c1").get("execution_count") == 3, timeout=100)
        assert tab.text("c1") == "1 []\n"
