"""docs/architecture.md's module list is what the modules' opening docstrings say."""

from __future__ import annotations

from jupyter_loop.architecture_doc import DOC, module_lines, render


def test_the_module_list_matches_the_modules() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/architecture.md's module list is out of date: python -m jupyter_loop.architecture_doc"
    )


def test_every_module_says_what_it_is_for() -> None:
    """A module without an opening docstring would have an empty line in the list."""
    assert [line.path for line in module_lines() if not line.summary] == []
