"""Every file guard names the tests that guard it (``jupyter_loop/document/file_guards``).

A guard's reason is a race found once under load (a chaos seed, a trial); its test is the
only proof it still holds. A reader who changes a guard finds in its docstring which tests
to run, and this test keeps the names true as tests move.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUARDS = sorted((ROOT / "jupyter_loop" / "document" / "file_guards").glob("*.py"))
NAMED = re.compile(r"``(tests/[\w/]+\.py)``")


@pytest.mark.parametrize("guard", GUARDS, ids=lambda path: path.stem)
def test_a_guard_names_tests_that_exist(guard: Path) -> None:
    doc = ast.get_docstring(ast.parse(guard.read_text(encoding="utf-8"))) or ""
    assert "Guarded by" in doc, f"{guard.name}: say which tests guard it ('Guarded by ...')"
    named = NAMED.findall(doc.split("Guarded by", 1)[1])
    assert named, f"{guard.name}: name at least one test file as ``tests/<folder>/test_x.py``"
    missing = [path for path in named if not (ROOT / path).is_file()]
    assert not missing, f"{guard.name} names tests that are not there: {missing}"
