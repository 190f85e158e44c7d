"""Helpers for the completion tests: a notebook with a printed table, the streaming API.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat

COMPLETION = ("api", "jupyter-loop", "completion")
#: What the first cell printed: the column name appears in its output, not its source.
TABLE = "   price_eur_2024  qty\n0           10.50    3\n1            7.25    1\n"
#: What a chat model answers to ``df["pr``, and what the editor is to insert.
ANSWER = 'price_eur_2024"]'
INSERTED = 'ice_eur_2024"]'


def notebook_with_table(root: Path, path: str = "prices.ipynb", secret: str = "") -> str:
    """Cells ``c0`` (loads and prints a table), ``c1`` (being edited), ``c2`` (after)."""
    nb = nbformat.v4.new_notebook()
    first = nbformat.v4.new_code_cell("df = load_prices()\nprint(df.head())", execution_count=1)
    first["id"] = "c0"
    first.outputs = [nbformat.v4.new_output("stream", name="stdout", text=TABLE + secret)]
    second = nbformat.v4.new_code_cell('df["pr')
    second["id"] = "c1"
    third = nbformat.v4.new_code_cell("df.describe()")
    third["id"] = "c2"
    nb.cells = [first, second, third]
    (root / path).write_text(nbformat.writes(nb), encoding="utf-8")
    return path


#: What a cell far above the edited one printed (not a neighbour: only on screen).
FAR_OUTPUT = "saved to data/sales_q3_2024.parquet\n"


def notebook_with_far_output(root: Path, path: str = "far.ipynb") -> str:
    """``f0`` printed :data:`FAR_OUTPUT`; nine cells ``f1``..``f9`` follow, then ``c1``
    (being edited): ``f0`` is too far above to be one of its neighbours."""
    nb = nbformat.v4.new_notebook()
    far = nbformat.v4.new_code_cell("save(sales)", execution_count=1)
    far["id"] = "f0"
    far.outputs = [nbformat.v4.new_output("stream", name="stdout", text=FAR_OUTPUT)]
    nb.cells = [far]
    for index in range(1, 10):
        filler = nbformat.v4.new_code_cell(f"x{index} = {index}", execution_count=index + 1)
        filler["id"] = f"f{index}"
        nb.cells.append(filler)
    edited = nbformat.v4.new_code_cell("pd.read_parquet(")
    edited["id"] = "c1"
    nb.cells.append(edited)
    (root / path).write_text(nbformat.writes(nb), encoding="utf-8")
    return path


def request(path: str = "prices.ipynb", **extra: Any) -> dict[str, Any]:
    """A completion request for the end of ``df["pr`` in cell ``c1``."""
    return {
        "path": path,
        "cell_id": "c1",
        "editor_id": "tab-1:c1",
        "before": 'df["pr',
        "after": "",
        **extra,
    }


def lines(body: bytes) -> list[dict[str, Any]]:
    """The NDJSON lines of a streamed answer."""
    return [json.loads(line) for line in body.decode().splitlines() if line.strip()]


def text_of(body: bytes) -> str:
    return "".join(line.get("text", "") for line in lines(body))


def sent_text(bodies: list[Any]) -> str:
    """Everything the model server was sent, as one text (for secrets and context)."""
    return json.dumps(bodies, ensure_ascii=False)
