"""The one rights check of every MCP request that touches a notebook: tools, resources
and tasks all ask :func:`refusal`."""

from __future__ import annotations

from typing import Any

from ..access_tokens import api_path
from ..rights import Ability, Grants


def refusal(grants: Grants, ability: Ability, what: str, path: Any) -> str | None:
    """Why ``grants`` may not do ``what`` (a tool, reading a resource, a task's method) on
    ``path``; ``None`` if it may."""
    missing = grants.missing(ability)
    if missing:
        return f"Forbidden: {what} needs the permission {' and '.join(missing)}."
    if grants.notebook is not None and api_path(path) != grants.notebook:
        return (
            f"Forbidden: this token is for the notebook {grants.notebook} only; "
            f"call {what} with path={grants.notebook!r}."
        )
    return None
