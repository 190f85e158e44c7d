"""The one table of what each thing a user does needs from the server's authorizer.

Every channel (REST handlers, the runs socket, the agent's turns, completions, MCP) asks
here, by :class:`Ability`, never by writing ``(action, resource)`` pairs of its own: a new
rule is written once, and the table is what ``docs/rights.md`` shows. Every question to the
authorizer is awaited (:func:`is_allowed`): jupyter_server lets ``is_authorized`` be
``async def``, and a coroutine left unawaited is truthy, which once let an MCP client do
everything under such an authorizer.

A request's answers are gathered once (:func:`grants_of`) into a frozen :class:`Grants`,
which the services read synchronously; rejected: passing the handler down to the services
(they would then know of HTTP, and each would ask the authorizer again, perhaps differently).

Example:
    >>> RIGHTS[Ability.RUN]
    (('execute', 'kernels'), ('write', 'contents'))
    >>> grants = Grants("ada", "ada", frozenset({("read", "contents")}))
    >>> grants.allows(Ability.READ), grants.missing(Ability.PROPOSE)
    (True, ['contents:write'])
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any, TypeVar

from jupyter_server.utils import ensure_async
from tornado.web import HTTPError

Right = tuple[str, str]
"""``(action, resource)`` as jupyter_server's ``Authorizer.is_authorized`` is asked."""


class Ability(str, Enum):
    """What a user does through jupyter-loop, whatever the channel."""

    READ = "read"
    """Read notebooks: cells, outputs, the assistant's conversation and journal."""
    PROPOSE = "propose"
    """Write proposals into a notebook, accept or reject them."""
    RUN = "run"
    """Run cells (outputs are written into the notebook), answer approvals and inputs."""
    INTERRUPT = "interrupt"
    """Interrupt a notebook's kernel."""
    VARIABLES = "variables"
    """Read a kernel's variables (introspection runs in the kernel, as code would)."""
    SEE_KERNELS = "see_kernels"
    """See what runs: queued cells, runs and turns in flight, the models on offer."""
    RESTORE = "restore"
    """Bring back a notebook's kept version, or propose a past run's source or outputs."""
    TERMINAL = "terminal"
    """Run commands on the server as a terminal does (an ACP agent's terminal requests)."""
    # Jupyter asks ``write`` to open a terminal and ``execute`` to type into one: both.


RIGHTS: Mapping[Ability, tuple[Right, ...]] = MappingProxyType(
    {
        Ability.READ: (("read", "contents"),),
        Ability.PROPOSE: (("write", "contents"),),
        Ability.RUN: (("execute", "kernels"), ("write", "contents")),
        Ability.INTERRUPT: (("execute", "kernels"),),
        Ability.VARIABLES: (("execute", "kernels"),),
        Ability.SEE_KERNELS: (("read", "kernels"),),
        Ability.RESTORE: (("read", "contents"), ("write", "contents")),
        Ability.TERMINAL: (("write", "terminals"), ("execute", "terminals")),
    }
)


def right_name(right: Right) -> str:
    """``('write', 'contents')`` as people read it: ``contents:write``."""
    action, resource = right
    return f"{resource}:{action}"


def rights_text(ability: Ability) -> str:
    """The rights an ability needs, joined with "and"."""
    return " and ".join(right_name(right) for right in RIGHTS[ability])


async def is_allowed(handler: Any, right: Right) -> bool:
    """Ask the server's authorizer about one right, awaiting it whether it is async or not."""
    user = handler.current_user
    if not user:
        return False
    action, resource = right
    return bool(
        await ensure_async(handler.authorizer.is_authorized(handler, user, action, resource))
    )


@dataclass(frozen=True)
class Grants:
    """What the user of one request may do: the rights the authorizer granted them.

    ``user`` is the name people know them by; ``principal`` who holds the credential, what
    ownership (an MCP session, an approval's allowance) is keyed by: two people may share a
    display name (see :func:`jupyter_loop.access.identity.principal_of`).
    A scoped token's grants are narrowed to its scope (:mod:`jupyter_loop.access.tokens`).
    """

    user: str
    principal: str
    granted: frozenset[Right]
    notebook: str | None = None
    """The one notebook the credential may touch (a scoped token's), or None: any."""
    scope: str | None = None
    """A scoped token's scope (``read``, ``propose``, ``run``), or None: not a scoped token.
    A refusal names it (:mod:`jupyter_loop.mcp_server.refusals`): what the token allows is
    what its holder can change, not the Jupyter permissions behind it."""

    def allows(self, ability: Ability) -> bool:
        return all(right in self.granted for right in RIGHTS[ability])

    def missing(self, ability: Ability) -> list[str]:
        return [right_name(right) for right in RIGHTS[ability] if right not in self.granted]


async def grants_of(handler: Any, user: str, principal: str) -> Grants:
    """Every right of the table, asked once each for this request."""
    wanted = {right for rights in RIGHTS.values() for right in rights}
    granted = frozenset([right for right in sorted(wanted) if await is_allowed(handler, right)])
    return Grants(user, principal, granted)


Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])
REQUIRES = "__jupyter_loop_requires__"
"""The attribute a handler method decorated with :func:`requires` carries (for the docs)."""


def requires(*abilities: Ability, message: str | None = None) -> Callable[[Method], Method]:
    """A handler method that needs these abilities: 403 (as Jupyter's ``@authorized``) if not.

    ``message``: what the 403 says (default: Jupyter's own words). Rejected: jupyter_server's
    ``@authorized``, one per pair, stacked: the pairs would be written again at every route,
    apart from the table the other channels read.
    """

    def wrap(method: Method) -> Method:
        @functools.wraps(method)
        async def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
            for ability in abilities:
                for right in RIGHTS[ability]:
                    if not await is_allowed(self, right):
                        action, resource = right
                        raise HTTPError(
                            403,
                            message
                            or f"User is not authorized to {action} on resource: {resource}.",
                        )
            return await method(self, *args, **kwargs)

        setattr(checked, REQUIRES, abilities)
        return checked  # type: ignore[return-value]

    return wrap
