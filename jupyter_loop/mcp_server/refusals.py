"""The one rights check of every MCP request that touches a notebook: tools, resources
and tasks all ask :func:`refusal`.

Its words are for an outside agent and the person who set it up. A scoped token's holder
can change the token, not the server's permissions, so a refusal by the token's scope
says what the scope allows and which scope would do ("this token's scope is propose: it
cannot run cells"); a refusal by the authorizer (a Jupyter token, or a token whose maker
lacks the right) names the Jupyter permissions, which an administrator grants.

Example:
    >>> from jupyter_loop.access.tokens import SCOPES
    >>> grants = Grants("ada", "token t1", SCOPES["propose"], None, "propose")
    >>> print(refusal(grants, Ability.RUN, "run_cells", "a.ipynb")[:74])
    Forbidden: this token's scope is propose: it cannot run cells (run_cells).
"""

from __future__ import annotations

from typing import Any

from ..access.rights import RIGHTS, Ability, Grants
from ..access.tokens import SCOPES, api_path

CAN: dict[Ability, str] = {
    Ability.READ: "read notebooks",
    Ability.PROPOSE: "propose edits",
    Ability.RUN: "run cells",
    Ability.INTERRUPT: "interrupt the kernel",
    Ability.VARIABLES: "read the kernel's variables",
    Ability.SEE_KERNELS: "see the kernels",
    Ability.RESTORE: "restore versions",
}
"""What an ability lets an agent do, as a refusal says it."""


def refusal(grants: Grants, ability: Ability, what: str, path: Any) -> str | None:
    """Why ``grants`` may not do ``what`` (a tool, reading a resource, a task's method) on
    ``path``; ``None`` if it may."""
    missing = grants.missing(ability)
    if missing:
        scope = grants.scope
        if scope is not None and not set(RIGHTS[ability]) <= SCOPES[scope]:
            return _beyond_scope(scope, ability, what)
        return f"Forbidden: {what} needs the permission {' and '.join(missing)}."
    if grants.notebook is not None and api_path(path) != grants.notebook:
        return (
            f"Forbidden: this token is for the notebook {grants.notebook} only; "
            f"call {what} with path={grants.notebook!r}."
        )
    return None


def _beyond_scope(scope: str, ability: Ability, what: str) -> str:
    said = f"Forbidden: this token's scope is {scope}: it cannot {CAN[ability]} ({what})."
    wider = next((s for s, rights in SCOPES.items() if set(RIGHTS[ability]) <= rights), None)
    if wider is None:
        return f"{said} No token's scope can; it needs the server's own token."
    return (
        f"{said} A token with scope {wider} can: make one with "
        f"'jupyter loop token create --scope {wider}'."
    )
