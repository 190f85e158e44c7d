"""The pure parts of completions: the prompt (neighbours, cells in view, outputs, budget,
masking, variables) and how a streamed answer is tidied (fences, a repeat of the typed word)."""

from __future__ import annotations

import json

import nbformat
from jupyter_ydoc import YNotebook

from jupyter_loop.completion.context import CONTEXT_CHARS, VIEW_CHARS, build_prompt, nearby_cells
from jupyter_loop.completion.models import FenceFilter, RepeatTrimmer
from jupyter_loop.completion.variables import VariableRecord
from jupyter_loop.notebook_view.notebook_map import CellSnapshot
from jupyter_loop.secrets import SecretMasker


def stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


def test_an_error_output_comes_as_its_headline():
    error = {
        "output_type": "error",
        "ename": "KeyError",
        "evalue": "'price_eur_2023'",
        "traceback": ["\x1b[31mKeyError\x1b[0m: 'price_eur_2023'"],
    }
    cells = [CellSnapshot("a", "code", 'df["price_eur_2023"]', 4, outputs=[error])]
    prompt = build_prompt("df[", "", cells, [], (), nonce="n", masker=None)
    assert "KeyError: 'price_eur_2023'" in prompt.prefix
    assert "\x1b" not in prompt.prefix


def test_nearest_cells_win_when_the_budget_runs_out():
    far = CellSnapshot("far", "code", "far_away = 1", 1, outputs=[stream("x" * 50_000)])
    near = [
        CellSnapshot(f"n{i}", "code", f"near_{i} = {i}", i, outputs=[stream("y" * 5_000)])
        for i in range(5)
    ]
    prompt = build_prompt("z", "", [far, *near], [], (), nonce="n", masker=None)
    assert "near_4 = 4" in prompt.prefix and "far_away" not in prompt.prefix
    assert len(prompt.prefix) <= CONTEXT_CHARS + 100


def test_secrets_and_variables():
    secret = "hunter2-canary-7c1e9b"
    masker = SecretMasker([secret], environ={})
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("key = load()"), nbformat.v4.new_code_cell("")]
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text=secret)]
    nb.cells[0]["id"], nb.cells[1]["id"] = "a", "b"
    notebook = YNotebook()
    notebook.set(json.loads(nbformat.writes(nb)))
    cells = nearby_cells(notebook, "b", masker=masker)  # read masked
    found = [VariableRecord("df", "DataFrame", "columns: price_eur_2024, qty")]
    before = f'k = "{secret}"\ndf["'
    prompt = build_prompt(before, "", cells.above, [], found, nonce="n", masker=masker)
    for text in (prompt.prefix, prompt.user):
        assert secret not in text and "key = load()\n# Out:\n# [0] stdout\n# ••••••" in text
        assert "df: DataFrame (columns: price_eur_2024, qty)" in text


def test_a_cursor_inside_a_secret_moves_past_its_mask():
    secret = "hunter2-canary-7c1e9b"
    masker = SecretMasker([secret], environ={})
    prompt = build_prompt('k = "hunter2-can', 'ary-7c1e9b"\n', [], [], (), nonce="n", masker=masker)
    assert (prompt.prefix, prompt.suffix) == ('k = "••••••', '"\n')
    assert 'k = "••••••<CURSOR>"' in prompt.user


def feed_all(pieces: list[str], before: str) -> str:
    fences, repeat = FenceFilter(), RepeatTrimmer(before)
    shown = "".join(repeat.feed(fences.feed(piece)) for piece in pieces)
    return shown + repeat.feed(fences.flush()) + repeat.flush()


def test_answers_are_tidied_however_they_are_split():
    answer = '```python\nprice_eur_2024"]\n```'
    for size in (1, 2, 3, 5, 40):
        pieces = [answer[i : i + size] for i in range(0, len(answer), size)]
        assert feed_all(pieces, 'df["pr') == 'ice_eur_2024"]'


def test_plain_answers_pass_unchanged():
    assert feed_all(["sum()", "\n"], "df.") == "sum()\n"
    assert feed_all(["pr", "int(x)"], "x = 1\n") == "print(x)"  # no word being typed
    assert feed_all(["p"], 'df["pr') == "p"  # too short to tell: kept


def test_cells_in_view_the_latest_runs_beyond_the_neighbours():
    nb = nbformat.v4.new_notebook()
    for index in range(20):
        cell = nbformat.v4.new_code_cell(f"step({index})", execution_count=100 - index)
        cell["id"] = f"c{index}"
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"out {index}\n")]
        nb.cells.append(cell)
    nb.cells[3].outputs = []  # in view, but nothing to show
    notebook = YNotebook()
    notebook.set(json.loads(nbformat.writes(nb)))
    visible = [f"c{index}" for index in range(12)]
    cells = nearby_cells(notebook, "c10", visible, masker=None)
    assert [c.id for c in cells.above] == ["c4", "c5", "c6", "c7", "c8", "c9"]
    assert [c.id for c in cells.below] == ["c11", "c12"]
    # In view and not neighbours: c0..c3, and c3 printed nothing.
    assert [c.id for c in cells.in_view] == ["c0", "c1", "c2"]
    assert nearby_cells(notebook, "c10", masker=None).in_view == ()
    every = [f"c{i}" for i in range(20)]
    assert len(nearby_cells(notebook, "c19", every, masker=None).in_view) == 4
    # Of c0..c11 (c3 aside), the four run last (highest counts), in notebook order.
    assert [c.id for c in nearby_cells(notebook, "c19", visible, masker=None).in_view] == [
        "c0",
        "c1",
        "c2",
        "c4",
    ]


def test_outputs_in_view_come_first_within_their_budget():
    big = [stream(f"line {i}\n" * 2_000) for i in range(3)]
    in_view = [
        CellSnapshot(f"v{i}", "code", f"show({i})", i + 1, outputs=[big[i]]) for i in range(3)
    ]
    near = [CellSnapshot("n", "code", "near = 1", 9)]
    prompt = build_prompt("z", "", near, [], (), nonce="n", masker=None, in_view=in_view)
    view = prompt.prefix.split("# In [9]:")[0]
    assert view.startswith("# In [1]: show(0)") and len(view) <= VIEW_CHARS + 10
    assert prompt.user.index("Outputs of other cells in view") < prompt.user.index("Cells above")
