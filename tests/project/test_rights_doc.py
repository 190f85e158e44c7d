"""docs/rights.md is what the rights table, the routes and the tool registry say."""

from __future__ import annotations

from pathlib import Path

from jupyter_loop.access.rights import REQUIRES
from jupyter_loop.app import all_routes
from jupyter_loop.rights_doc import METHODS, render

DOC = Path(__file__).parents[2] / "docs" / "rights.md"


def test_the_document_matches_the_code() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/rights.md is out of date: python -m jupyter_loop.rights_doc > docs/rights.md"
    )


def ours(handler: type, method: str) -> bool:
    """The handler serves ``method`` with code of jupyter-loop (not Jupyter's or tornado's)."""
    return any(
        method in vars(base)
        for base in handler.__mro__
        if base.__module__.startswith("jupyter_loop")
    )


def test_every_route_method_states_its_rights() -> None:
    """A handler method without @requires would be left out of the document (and would ask
    the authorizer nothing): every method our routes serve must carry one."""
    unstated = [
        f"{pattern} {method}"
        for pattern, handler in all_routes()
        for method in METHODS
        if ours(handler, method) and getattr(getattr(handler, method), REQUIRES, None) is None
    ]
    assert unstated == []
