"""A cell's source replaced on the server while a tab appends a line to the old one.

An accepted proposal (or a returning tab's restore) rewrites a cell's source with
``set_source``, touching only what changed. A tab that had not heard of the rewrite yet
typed a line at the end of the old source. The line belongs at the end of the new source,
whichever client's id is smaller (Y orders concurrent inserts at one place by client id):
seen in chaos seed 2039 trial 754, where the tab's line landed inside the accepted code
(``print('c0-\\n# B 4p1', ...)``) in 2 of 3 replays.

Both documents are pycrdt (the server's and a Python tab's); the merged updates are also
read with Yjs, as a browser tab holds them.
"""

from __future__ import annotations

import pytest
from jupyter_ydoc import YNotebook
from pycrdt import Doc

from jupyter_loop.document import set_source
from jupyter_loop.testing.yjs import read_with_yjs

OLD = "for i in range(3):\n    print('c0-t0', i)\n# B 1"
NEW = "for i in range(3):\n    print('c0-p1', i)"
LINE = "\n# B 4"


def _notebook(client_id: int) -> YNotebook:
    return YNotebook(Doc(client_id=client_id))


@pytest.mark.parametrize(
    ("server_id", "tab_id"),
    [(8518242383092453, 7713872625072414), (7713872625072414, 8518242383092453)],
    ids=["tab-id-smaller", "server-id-smaller"],
)
def test_a_line_appended_to_the_old_source_ends_the_new_one(server_id: int, tab_id: int) -> None:
    server, tab = _notebook(server_id), _notebook(tab_id)
    server.append_cell({"id": "c0", "cell_type": "code", "source": OLD, "metadata": {}})
    tab.ydoc.apply_update(server.ydoc.get_update())
    seen_by_tab = tab.ydoc.get_state()
    seen_by_server = server.ydoc.get_state()

    typed_into = tab.ycells[0]["source"]
    typed_into += LINE  # the tab has not heard of the rewrite yet
    set_source(server.ycells[0], NEW)

    from_tab = tab.ydoc.get_update(seen_by_server)
    from_server = server.ydoc.get_update(seen_by_tab)
    server.ydoc.apply_update(from_tab)
    tab.ydoc.apply_update(from_server)

    want = NEW + LINE
    assert str(server.ycells[0]["source"]) == want
    assert str(tab.ycells[0]["source"]) == want
    browser = read_with_yjs({"nb": [server.ydoc.get_update()]})["nb"]
    assert browser.whole
    assert browser.cells[0]["source"] == want


def test_a_rewrite_keeps_the_lines_around_it() -> None:
    """The usual case: a change in the middle leaves what is before and after it."""
    server = _notebook(1)
    server.append_cell(
        {"id": "c0", "cell_type": "code", "source": "a = 1\nb = 2\nc = 3", "metadata": {}}
    )
    set_source(server.ycells[0], "a = 1\nb = 20\nc = 3")
    assert str(server.ycells[0]["source"]) == "a = 1\nb = 20\nc = 3"
    set_source(server.ycells[0], "é = 1\nb = 20")  # multi-byte: positions in UTF-8 bytes
    assert str(server.ycells[0]["source"]) == "é = 1\nb = 20"
