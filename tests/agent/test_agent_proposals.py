"""Proposals in a shared notebook (pure: a YNotebook without a server)."""

from __future__ import annotations

import pytest
from jupyter_ydoc import YNotebook

from jupyter_loop.agent import proposals
from jupyter_loop.agent.plan import TurnPlan
from jupyter_loop.agent.prompt import TurnPrompt
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
    p = proposals.create(nb, turn_id="t", kind="modify", cell_id="c1", new_source="b = a").proposal
    assert p.base_source == "b = a / 0" and p.status == "pending"
    assert sources(nb)[1] == ("c1", "b = a / 0")
    accepted = proposals.apply(nb, p.id, "ada")
    assert (accepted.status, accepted.resolved_by) == ("accepted", "ada")
    assert sources(nb) == [("c0", "a = 1"), ("c1", "b = a")]
    with pytest.raises(Conflict):
        proposals.apply(nb, p.id, "bob")


def test_a_changed_or_deleted_cell_makes_a_proposal_stale(nb):
    p = proposals.create(nb, turn_id="t", kind="modify", cell_id="c1", new_source="b = a").proposal
    set_source(nb.ycells[1], "b = 2")
    assert proposals.is_stale(nb, p)
    with pytest.raises(Conflict):
        proposals.apply(nb, p.id, "ada")
    assert sources(nb)[1] == ("c1", "b = 2")
    d = proposals.create(nb, turn_id="t", kind="delete", cell_id="c0").proposal
    i = proposals.create(nb, turn_id="t", kind="insert", cell_id="c0", new_source="x").proposal
    del nb.ycells[0]
    assert proposals.is_stale(nb, d) and proposals.is_stale(nb, i)


def test_insert_and_delete(nb):
    top = proposals.create(
        nb, turn_id="t", kind="insert", cell_id=None, new_source="# hi", cell_type="markdown"
    ).proposal
    after = proposals.create(
        nb, turn_id="t", kind="insert", cell_id="c0", new_source="c = 3"
    ).proposal
    gone = proposals.create(nb, turn_id="t", kind="delete", cell_id="c1").proposal
    first = proposals.apply(nb, top.id, "ada").new_cell_id
    second = proposals.apply(nb, after.id, "ada").new_cell_id
    proposals.apply(nb, gone.id, "ada")
    assert sources(nb) == [(first, "# hi"), ("c0", "a = 1"), (second, "c = 3")]
    assert nb.ycells[0]["cell_type"] == "markdown"
    assert [p.id for p in proposals.of_turn(nb, "t")] == [top.id, after.id, gone.id]


def test_reject_leaves_the_cells_untouched(nb):
    p = proposals.create(nb, turn_id="t", kind="delete", cell_id="c0").proposal
    rejected = proposals.reject(nb, p.id, "bob")
    assert (rejected.status, rejected.resolved_by) == ("rejected", "bob")
    assert sources(nb) == [("c0", "a = 1"), ("c1", "b = a / 0")]
    with pytest.raises(Conflict):
        proposals.reject(nb, p.id, "bob")


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
    assert second.replaced == (first.proposal.id,)
    left = {p["id"] for p in proposals.proposals_map(nb).to_py().values()}
    assert left == {other.proposal.id, kept.proposal.id, second.proposal.id}


def test_an_accepted_change_the_notebook_no_longer_holds_is_undone(nb):
    """What the model's working memory says of a proposal a user accepted, then undid."""
    modify = proposals.create(
        nb, turn_id="t", kind="modify", cell_id="c1", new_source="b = a"
    ).proposal
    modify = proposals.apply(nb, modify.id, "ada")
    assert not proposals.is_undone(nb, modify)
    set_source(nb.ycells[1], "b = a / 0")  # what Ctrl-Z in a tab leaves
    assert proposals.is_undone(nb, modify)
    set_source(nb.ycells[1], "b = a + 1")  # edited further: the user's own change
    assert not proposals.is_undone(nb, modify)

    insert = proposals.create(nb, turn_id="t", kind="insert", cell_id="c0", new_source="x").proposal
    insert = proposals.apply(nb, insert.id, "ada")
    assert not proposals.is_undone(nb, insert)
    del nb.ycells[1]  # the inserted cell
    assert proposals.is_undone(nb, insert)

    delete = proposals.create(nb, turn_id="t", kind="delete", cell_id="c0").proposal
    delete = proposals.apply(nb, delete.id, "ada")
    assert not proposals.is_undone(nb, delete)
    nb.append_cell({"id": "c0", "cell_type": "code", "source": "a = 1", "metadata": {}})
    assert proposals.is_undone(nb, delete)


async def test_the_models_working_memory_says_an_undone_proposal_was_undone(nb):
    plan = TurnPlan(
        turn_id="t",
        room_id="json:notebook:f",
        file_id="f",
        user="ada",
        message="Fix it.",
        model="m",
        focus_ids=(),
        policy="ask",
        max_steps=4,
        budget_tokens=8_000,
        stream_interval=0.05,
    )
    prompt = TurnPrompt(plan, [], None)
    p = proposals.create(nb, turn_id="t", kind="modify", cell_id="c1", new_source="b = a").proposal

    async def memory() -> str:
        said = await prompt.messages(
            nb, steps=[], touched=[], notes=[], variables="", budget=8_000, images=False
        )
        return next(line for m in said for line in m.content.splitlines() if p.id in line)

    try:
        proposals.apply(nb, p.id, "ada")
        assert (await memory()).endswith(": accepted")
        set_source(nb.ycells[1], "b = a / 0")  # what Ctrl-Z in a tab leaves
        assert "accepted, then undone by the user" in await memory()
    finally:
        prompt.close()
