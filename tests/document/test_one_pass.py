"""The one-pass read of a live notebook gives what ``YNotebook.get`` gives (see
``jupyter_loop/document/one_pass.py``; the count of reads on a room's load is in
``test_big_notebook.py``)."""

from __future__ import annotations

import sys
from typing import Any

import nbformat
import pytest
from jupyter_ydoc import YNotebook
from pycrdt import Array

from jupyter_loop.document.cells import find_cell, find_cells
from jupyter_loop.document.one_pass import notebook_content

BIG = 3000


def varied(minor: int = 5) -> dict[str, Any]:
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = minor
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3"}, "x": 1.5}
    code = nbformat.v4.new_code_cell("x = 1\nprint('é \\u00e9 \"q\"')", id="a", execution_count=3)
    code.metadata = {"tags": ["t"], "n": 2, "scrolled": True}
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="line 1\nline 2\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=3),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<F>"}),
        nbformat.v4.new_output("error", ename="E", evalue="v", traceback=["t\x1b[0m"]),
    ]
    markdown = nbformat.v4.new_markdown_cell("# Title", id="b")
    markdown.attachments = {}
    raw = nbformat.v4.new_raw_cell("raw", id="c")
    raw.attachments = {"a.png": {"image/png": "iVBOR"}}
    empty = nbformat.v4.new_code_cell("", id="d")
    nb.cells = [code, markdown, raw, empty]
    if minor <= 4:
        for cell in nb.cells:
            del cell["id"]
    return dict(nb)


@pytest.mark.parametrize("minor", [4, 5])
def test_a_notebook_read_in_one_pass_is_what_get_reads(minor: int) -> None:
    notebook = YNotebook()
    notebook.set(varied(minor))
    assert notebook_content(notebook) == notebook.get()


def test_an_exact_duplicate_cell_is_dropped_as_get_drops_it() -> None:
    notebook = YNotebook()
    content = varied()
    content["cells"] = [*content["cells"], content["cells"][0]]
    notebook.set(content)
    notebook.ycells.append(notebook.create_ycell(content["cells"][0]))
    read = notebook_content(notebook)
    assert read == notebook.get()
    assert [c["id"] for c in read["cells"]] == ["a", "b", "c", "d"]


class IndexedReads:
    """How many elements of shared arrays are read by index (``pycrdt.Array.__getitem__``,
    O(index) each) while it is the profile function."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is Array.__getitem__.__code__:
            self.count += 1


def test_finding_cells_in_a_big_notebook_reads_them_in_one_pass() -> None:
    notebook = YNotebook()
    cells = [nbformat.v4.new_code_cell("x = 1", id=f"c{i}") for i in range(BIG)]
    notebook.set(dict(nbformat.v4.new_notebook(cells=cells)))
    reads = IndexedReads()
    sys.setprofile(reads)
    try:
        index, ycell = find_cell(notebook, f"c{BIG - 1}")
        found = find_cells(notebook, ["c0", f"c{BIG // 2}", f"c{BIG - 1}"])
        hinted = find_cell(notebook, f"c{BIG - 2}", hint=BIG - 2)
    finally:
        sys.setprofile(None)
    assert (index, ycell.get("id")) == (BIG - 1, f"c{BIG - 1}")
    assert {k: (i, c.get("id")) for k, (i, c) in found.items()} == {
        "c0": (0, "c0"), f"c{BIG // 2}": (BIG // 2, f"c{BIG // 2}"),
        f"c{BIG - 1}": (BIG - 1, f"c{BIG - 1}"),
    }  # fmt: skip
    assert hinted[0] == BIG - 2
    # One read of each cell found, not one of every cell before it.
    assert reads.count <= 5, f"{reads.count} cells read by index in a {BIG}-cell notebook"
