"""Who is asking: a request's user as people know them, and who holds its credential.

Jupyter's identity provider answers for the server. It names a request that carries the
server's own token after a new random moon, kept in a login cookie: a script that keeps no
cookies is "Anonymous Io" at one call and "Anonymous Europa" at the next, and an MCP client
or the terminal client is a new moon at each connection, in the journal, the approvals and
the run history. All those requests are the one person who holds the token, the one who
started the server, so here they carry the server's login name. So does a browser's
login cookie: Jupyter's own identity provider makes the user it holds the same way (a new
moon per browser session, at the login with the token or password), and the tab's runs
socket, which carries only the cookie, showed "Anonymous Pasithee" in the run history
while the panel, whose requests carry the token, showed the login name (issue 42). A
server whose identity provider names them itself (a Hub's, or one that overrides
``generate_anonymous_user``) is followed as it is. Rejected: replacing the server's
identity provider (an administrator's own choice, and the authorizer must keep seeing the
user Jupyter made).
"""

from __future__ import annotations

import functools
import getpass
import re
from collections.abc import Mapping
from typing import Any

from jupyter_server.auth.identity import IdentityProvider

SERVER_TOKEN_PRINCIPAL = "holder of the server's token"


def name_of(user: Any) -> str:
    """A Jupyter user as people know them (not an anonymous user's random id).

    Example:
        >>> from jupyter_server.auth.identity import User
        >>> name_of(User("4f1c…", name="ada", display_name="Ada L.")), name_of(None)
        ('Ada L.', 'anonymous')
    """
    for attribute in ("display_name", "name", "username"):
        value = getattr(user, attribute, None)
        if value:
            return str(value)
    return "anonymous"


def principal_of(handler: Any) -> str:
    """Who holds the request's credential: what sessions and allowances belong to.

    A Jupyter user's unique ``username`` (not the display name, which two people may share),
    except for a request carrying the server's own shared token: they are all one holder
    of one credential (rejected: the moon's name, which changes with every cookie-less
    request, so an MCP client that keeps no cookies would lose its session at once).
    """
    token = getattr(handler, "token", None)
    if token and handler.identity_provider.get_token(handler) == token:
        return SERVER_TOKEN_PRINCIPAL
    user = handler.current_user
    value = getattr(user, "username", None) or getattr(user, "name", None)
    return f"user {value}" if value else "anonymous"


def user_name_of(handler: Any) -> str:
    """The request's user as people know them, the same at every request (see the module
    docstring): the server's login name for the holder of its own token, and for a user
    Jupyter's own identity provider named at random (a browser's login cookie)."""
    if _named_at_random(handler) and (
        principal_of(handler) == SERVER_TOKEN_PRINCIPAL or made_at_random(handler.current_user)
    ):
        return server_login_name()
    return name_of(handler.current_user)


_RANDOM_ID = re.compile(r"[0-9a-f]{32}")


def made_at_random(user: Any) -> bool:
    """Whether ``user`` (a Jupyter ``User``, or a tab's awareness ``user`` field) is one
    Jupyter's own identity provider made up: a random hex id named "Anonymous <moon>".
    Such a user is the server's one person (see the module docstring).

    Example:
        >>> made_at_random({"username": "0f" * 16, "name": "Anonymous Io",
        ...                 "display_name": "Anonymous Io"})
        True
        >>> made_at_random({"username": "ada", "name": "Anonymous Io"})
        False
    """
    fields = user if isinstance(user, Mapping) else vars(user) if user is not None else {}
    username, name = fields.get("username"), fields.get("name")
    return (
        isinstance(username, str)
        and _RANDOM_ID.fullmatch(username) is not None
        and isinstance(name, str)
        and name.startswith("Anonymous ")
        and fields.get("display_name", name) == name
    )


def _named_at_random(handler: Any) -> bool:
    generate = type(handler.identity_provider).generate_anonymous_user
    return generate is IdentityProvider.generate_anonymous_user


@functools.cache
def server_login_name() -> str:
    """The login name the server runs under (``"the server's user"`` when the system has
    none for its user id, as in some containers)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "the server's user"
