"""The chaos suite's invariants catch what they claim to (so a clean run means something)."""

from __future__ import annotations

from jupyter_loop.execution.durability.recovery import CUT_OFF
from jupyter_loop.testing.chaos_checks import (
    CellSeen,
    check_cells,
    output_problem,
    source_problem,
)
from jupyter_loop.testing.chaos_world import Expected, ExpectedCell, cell_code, printed_lines


def typed_cell() -> ExpectedCell:
    cell = ExpectedCell("c0", cell_code("c0-t0"), "c0-t0", ["c0-t0"])
    for tab, line in (("A", "# A 1"), ("B", "# B 1"), ("A", "# A 2")):
        cell.type(tab, line)
    return cell


def seen(cell_id: str, source: str, lines: list[str], *other: str) -> CellSeen:
    return CellSeen(cell_id, source, "".join(f"{line}\n" for line in lines), other, "idle")


def test_typed_lines_merged_in_any_order_between_tabs_pass():
    cell = typed_cell()
    assert source_problem(cell, cell.code + "\n# B 1\n# A 1\n# A 2") is None
    assert source_problem(cell, cell.code + "\n# A 1\n# A 2\n# B 1") is None


def test_a_lost_repeated_or_reordered_typed_line_is_caught():
    cell = typed_cell()
    assert "missing ['# B 1']" in str(source_problem(cell, cell.code + "\n# A 1\n# A 2"))
    assert "repeated" in str(source_problem(cell, cell.code + "\n# A 1\n# B 1\n# B 1\n# A 2"))
    assert "out of order" in str(source_problem(cell, cell.code + "\n# A 2\n# B 1\n# A 1"))
    assert "want c0-t1" in str(
        source_problem(ExpectedCell("c0", cell_code("c0-t1"), "c0-t1"), cell.code)
    )


def test_outputs_must_be_a_whole_run_unless_cut_and_noted():
    cell = typed_cell()
    whole = printed_lines("c0-t0")
    assert "want [] (the last run's)" in str(
        output_problem(cell, seen("c0", "", whole), exact=False, cut=False)
    )
    cell.stdout = whole
    assert output_problem(cell, seen("c0", "", whole), exact=False, cut=False) is None
    assert output_problem(cell, seen("c0", "", whole[:-1]), exact=False, cut=True)
    cell.stdout = None  # a run was in flight: any run's lines will do
    assert output_problem(cell, seen("c0", "", whole), exact=True, cut=False) is None
    assert output_problem(cell, seen("c0", "", whole[:3]), exact=False, cut=False)
    note = f"[jupyter-loop] {CUT_OFF}\n"
    assert output_problem(cell, seen("c0", "", whole[:3], note), exact=False, cut=True) is None
    assert output_problem(cell, seen("c0", "", whole[:3], note), exact=True, cut=True)
    assert output_problem(cell, seen("c0", "", whole[:3], "Traceback"), exact=False, cut=True)
    doubled = whole[:5] + whole[4:]
    assert output_problem(cell, seen("c0", "", doubled), exact=False, cut=True)


def test_a_duplicated_or_lost_cell_is_caught():
    expected = Expected([typed_cell(), ExpectedCell("c1", cell_code("c1-t0"), "c1-t0", ["c1-t0"])])
    source = expected.cells[0].code + "\n# A 1\n# B 1\n# A 2"
    c0 = seen("c0", source, [])
    c1 = seen("c1", expected.cells[1].code, [])
    assert check_cells(expected, [c0, c1], "p", "v", exact=False) == []
    [duplicated] = check_cells(expected, [c0, c0, c1], "p", "v", exact=False)
    assert "duplicated ['c0']" in duplicated.what
    [lost] = check_cells(expected, [c0], "p", "v", exact=False)
    assert "lost ['c1']" in lost.what
