"""What a new user reads first answers their first questions (issue 42, "the first hour"):
every section of the manual is in its table of contents, and the configuration page says
where ``jupyter_server_config.py`` lives."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading.

    >>> anchor("Notebook versions (get a notebook back)")
    'notebook-versions-get-a-notebook-back'
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_page_of_the_manual_is_in_its_table_of_contents() -> None:
    """The manual is one page per feature under docs/manual/, listed by docs/features.md."""
    contents = (DOCS / "features.md").read_text("utf-8")
    listed = set(re.findall(r"^- \[.+?\]\(manual/([^)#]+)\)", contents, flags=re.M))
    pages = {page.name for page in (DOCS / "manual").glob("*.md")}
    assert sorted(pages - listed) == []


def test_the_configuration_page_says_where_the_config_file_lives() -> None:
    page = (DOCS / "configuration.md").read_text("utf-8")
    intro = page.split("\n## ", 1)[0]
    assert "jupyter --config-dir" in intro
    assert "jupyter server --generate-config" in intro
