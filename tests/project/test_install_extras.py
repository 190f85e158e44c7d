"""The README's install brings what the README promises: ``jupyter notebook`` (Notebook 7)
comes with the ``notebook`` extra it names (issue 42: "jupyter-notebook not found")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")  # Python 3.11+


def test_the_notebook_extra_brings_notebook_7_and_the_readme_names_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    extra = project["optional-dependencies"].get("notebook", [])
    assert any(re.fullmatch(r"notebook\s*>=\s*7[.\d]*", spec) for spec in extra), extra
    readme = (ROOT / "README.md").read_text("utf-8")
    notebook7 = readme.index("Jupyter Notebook 7")
    assert 'pip install -e ".[notebook]"' in readme[notebook7 : notebook7 + 600]
