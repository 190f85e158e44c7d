"""A cell's value (``execute_result``) reaches the tabs in the update that ends its run.

ipykernel sends a cell's value last, just before its reply: written at once, it cost a
document transaction of its own (its update encoded, sent to every tab, handed to the
store) a few milliseconds before the run's end wrote another, while the kernel was
finishing the run; a trivial cell over the runs socket paid for both
(``bench/execution_overhead.py``). The value waits for the run's end now, at most the
writer's batch interval. Counted in the updates a tab receives, never timed.
"""

from __future__ import annotations

from typing import Any

from jupyter_ydoc import YNotebook
from loop_helpers import wait_for


def states_seen(start: bytes, updates: list[bytes]) -> list[tuple[Any, int]]:
    """The cell's (execution count, number of outputs) after each update, in order."""
    replay = YNotebook()
    replay.ydoc.apply_update(start)
    seen = []
    for update in updates:
        replay.ydoc.apply_update(update)
        cell = replay.get_cell(0)
        seen.append((cell.get("execution_count"), len(cell.get("outputs", []))))
    return seen


async def test_a_cells_value_comes_with_its_end(notebook_in_tab: Any, run_cells: Any) -> None:
    async with notebook_in_tab("value.ipynb", "1 + 1") as (path, tab):
        for count in (1, 2, 3):
            start = tab.notebook.ydoc.get_update()
            updates: list[bytes] = []
            subscription = tab.notebook.ydoc.observe(lambda e, kept=updates: kept.append(e.update))
            await run_cells(path, "c0")
            await wait_for(lambda n=count: tab.cell("c0").get("execution_count") == n, timeout=60)
            tab.notebook.ydoc.unobserve(subscription)
            states = states_seen(start, updates)
            # Never the value without the count: they came in one update.
            assert (None, 1) not in states, states
            assert states[-1] == (count, 1), states
