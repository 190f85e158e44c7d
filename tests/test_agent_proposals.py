"""Proposals in a shared notebook (pure: a YNotebook without a server)."""

from __future__ import annotations

import pytest
from jupyter_ydoc import YNotebook

from jupyter_loop.agent import proposals
from jupyter_loop.document import set_source
from jupyter_loop.errors import Conflict, NotFound


@pytest.fixture
def nb():
    notebook = YNotebook()
    for index, source in enumerate(["a = 1", "b = a / 0"]):
        notebook.append_cell(
            {"id": f"c{index}", "cell_type": "code", "source": source, "metadata": {}}
        )
    return notebook


def sources(nb):
    return [(str(c["id"]), str(c["source"])) for c in nb.ycells]


def test_modify_records_its_base_and_applies_in_place(nb):
    p = proposals.create(nb, turn_id="t", kind="modify", cell_id="c1", new_source="b = a")
    assert p["base_source"] == "b = a / 0" and p["status"] == "pending"
    assert sources(nb)[1] == ("c1", "b = a / 0")
    accepted = proposals.apply(nb, p["id"], "ada")
    assert (accepted["status"], accepted["resolved_by"]) == ("accepted", "ada")
    assert sources(nb) == [("c0", "a = 1"), ("c1", "b = a")]
    with pytest.raises(Conflict):
        proposals.apply(nb, p["id"], "bob")


def test_a_changed_or_deleted_cell_makes_a_proposal_stale(nb):
    p = proposals.create(nb, turn_id="t", kind="modify", cell_id="c1", new_source="b = a")
    set_source(nb.ycells[1], "b = 2")
    assert proposals.is_stale(nb, p)
    with pytest.raises(Conflict):
        proposals.apply(nb, p["id"], "ada")
    assert sources(nb)[1] == ("c1", "b = 2")
    d = proposals.create(nb, turn_id="t", kind="delete", cell_id="c0")
    i = proposals.create(nb, turn_id="t", kind="insert", cell_id="c0", new_source="x")
    del nb.ycells[0]
    assert proposals.is_stale(nb, d) and proposals.is_stale(nb, i)


def test_insert_and_delete(nb):
    top = proposals.create(
        nb, turn_id="t", kind="insert", cell_id=None, new_source="# hi", cell_type="markdown"
    )
    after = proposals.create(nb, turn_id="t", kind="insert", cell_id="c0", new_source="c = 3")
    gone = proposals.create(nb, turn_id="t", kind="delete", cell_id="c1")
    first = proposals.apply(nb, top["id"], "ada")["new_cell_id"]
    second = proposals.apply(nb, after["id"], "ada")["new_cell_id"]
    proposals.apply(nb, gone["id"], "ada")
    assert sources(nb) == [(first, "# hi"), ("c0", "a = 1"), (second, "c = 3")]
    assert nb.ycells[0]["cell_type"] == "markdown"
    assert [p["id"] for p in proposals.of_turn(nb, "t")] == [top["id"], after["id"], gone["id"]]


def test_reject_leaves_the_cells_untouched(nb):
    p = proposals.create(nb, turn_id="t", kind="delete", cell_id="c0")
    rejected = proposals.reject(nb, p["id"], "bob")
    assert (rejected["status"], rejected["resolved_by"]) == ("rejected", "bob")
    assert sources(nb) == [("c0", "a = 1"), ("c1", "b = a / 0")]
    with pytest.raises(Conflict):
        proposals.reject(nb, p["id"], "bob")


def test_unknown_proposals_and_cells(nb):
    with pytest.raises(NotFound):
        proposals.get(nb, "p-missing")
    with pytest.raises(NotFound):
        proposals.create(nb, turn_id="t", kind="modify", cell_id="ghost", new_source="")


@pytest.mark.parametrize(
    ("before", "after"),
    [("", "x"), ("abc", ""), ("print(1)", "print(2)"), ("é😀 a", "é😀 b 😀"), ("same", "same")],
)
def test_set_source_replaces_only_what_changed(before, after):
    nb = YNotebook()
    nb.append_cell({"id": "c", "cell_type": "code", "source": before, "metadata": {}})
    set_source(nb.ycells[0], after)
    assert str(nb.ycells[0]["source"]) == after


def test_a_new_edit_of_a_cell_replaces_the_pending_one_of_the_same_turn(nb):
    first = proposals.create(nb, turn_id="t", kind="modify", cell_id="c1", new_source="b = 1")
    other = proposals.create(nb, turn_id="u", kind="modify", cell_id="c1", new_source="b = 9")
    kept = proposals.create(nb, turn_id="t", kind="modify", cell_id="c0", new_source="a = 2")
    second = proposals.create(nb, turn_id="t", kind="delete", cell_id="c1")
    assert second["replaced"] == [first["id"]]
    left = {p["id"] for p in proposals.proposals_map(nb).to_py().values()}
    assert left == {other["id"], kept["id"], second["id"]}
