"""Seconds the assistant's output summaries take on huge outputs (they must not scan it all).

Three figures, each with its goal (what ``tests/notebook_view/test_agent_summary.py`` used to
assert with a clock, and failed under load; the tests now check only the summaries' text):

* ``head_tail`` of 45 MB of ``progress\\r`` lines, cut to 2,000 characters (goal 50 ms);
* ``summarize_output`` of a 200,000-row pandas HTML table (goal 100 ms);
* ``summarize_outputs`` of a 5,000,000-line coloured stream (goal 50 ms).

Usage: ``python bench/summaries.py [rounds]`` (default 5). Prints each median, the slowest
round and the median's ratio to its goal.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from jupyter_loop.notebook_view.summary import head_tail, summarize_output, summarize_outputs


def pandas_html(rows: int, cols: int) -> str:
    """A table as pandas writes it, with its ``N rows × M columns`` footer."""
    head = "<tr><th></th>" + "".join(f"<th>c{c}</th>" for c in range(cols)) + "</tr>"
    body = "".join(
        f"<tr><th>{r}</th>" + "".join(f"<td>{r * 10 + c}</td>" for c in range(cols)) + "</tr>\n"
        for r in range(rows)
    )
    table = f'<table border="1" class="dataframe"><thead>{head}</thead><tbody>{body}</tbody>'
    return table + f"</table>\n<p>{rows} rows × {cols} columns</p>"


def cases() -> list[tuple[str, float, Callable[[], Any]]]:
    progress = "progress\r" * 5_000_000 + "done\n"
    table = {
        "output_type": "execute_result",
        "execution_count": 1,
        "data": {"text/html": pandas_html(200_000, 5)},
        "metadata": {},
    }
    lines = "\x1b[32mok\x1b[0m line\n" * 5_000_000
    stream = [{"output_type": "stream", "name": "stdout", "text": lines}]
    return [
        ("head_tail, 45 MB of progress lines", 0.05, lambda: head_tail(progress, 2000, clean=True)),
        ("summarize_output, 200,000-row table", 0.1, lambda: summarize_output(table, 2000)),
        ("summarize_outputs, 5,000,000 lines", 0.05, lambda: summarize_outputs(stream, 4000)),
    ]


def main(rounds: int) -> None:
    for name, goal, summarise in cases():
        seconds = []
        for _ in range(rounds):
            started = time.perf_counter()
            summarise()
            seconds.append(time.perf_counter() - started)
        median = statistics.median(seconds)
        print(
            f"{name}: median {median * 1000:.1f} ms, slowest {max(seconds) * 1000:.1f} ms, "
            f"goal {goal * 1000:.0f} ms ({median / goal:.2f}x)"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
