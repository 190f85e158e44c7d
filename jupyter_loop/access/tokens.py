"""Scoped tokens for outside agents: at most read, propose or run, maybe for one notebook.

An agent that holds the user's Jupyter token can start kernels and run any code through
Jupyter's own API. A scoped token is accepted by the MCP endpoint only, and gives at most
its scope's rights, and at most those its creator has (the server's authorizer is asked
about the creator at every request): ``propose`` can never run a cell or read variables.

Tokens are made, listed and revoked through the REST API (``jupyter loop token``), by a
request with the user's own credential. The store keeps a token's SHA-256 only (a token is
32 random bytes: a slow hash would add nothing), in one owner-only file; a token is shown
once, when made. Its id is part of it (``jlt_<id>_<secret>``), so checking one is a
lookup and a constant-time comparison. Rejected: Jupyter's own token list (there is none
to add to: a server has one token), and JupyterHub's scoped API tokens (only on a Hub,
and they scope Jupyter's API, not jupyter-loop's abilities).

Example:
    >>> import tempfile
    >>> store = AccessTokens(Path(tempfile.mkdtemp()) / "tokens.json")
    >>> ada = TokenOwner("user ada", "ada", "Ada")
    >>> made, secret = store.create(ada, "propose", None, 3600, now=0)
    >>> store.check(secret, now=10) == made, store.check(secret, now=4000)
    (True, None)
    >>> sorted(SCOPES["propose"])
    [('read', 'contents'), ('write', 'contents')]
"""

from __future__ import annotations

import hashlib
import hmac
import json
import posixpath
import secrets
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import BadRequest, NotFound
from ..owner_only import replace_private
from ..state_files import Damaged, DamagedFiles, expect, open_or_set_aside
from .rights import Right

PREFIX = "jlt_"
SCOPES: dict[str, frozenset[Right]] = {
    "read": frozenset({("read", "contents")}),
    "propose": frozenset({("read", "contents"), ("write", "contents")}),
    "run": frozenset(
        {("read", "contents"), ("write", "contents"), ("execute", "kernels"), ("read", "kernels")}
    ),
}
"""The rights each scope gives at most (see :mod:`jupyter_loop.access.rights`)."""
MAX_SECONDS = 366 * 24 * 3600


@dataclass(frozen=True)
class TokenOwner:
    """Who made a token: the principal (:func:`jupyter_loop.access.identity.principal_of`: whose
    tokens they list and revoke), and the Jupyter user the authorizer is asked about when
    the token is used (``username``) and people see (``name``)."""

    principal: str
    username: str
    name: str


@dataclass(frozen=True)
class AccessToken:
    """One scoped token, as stored (its hash, never the token)."""

    id: str
    scope: str
    notebook: str | None
    created: float
    expires: float | None
    owner: TokenOwner
    digest: str
    agent: str | None = None
    """The ACP agent the server minted it for (its label), or None: a person made it. The
    server's word, not a client's claim: calls with it are shown as that agent's."""

    def public(self) -> dict[str, Any]:
        """What ``token list`` shows: everything but the hash."""
        shown = asdict(self)
        del shown["digest"]
        return shown


class AccessTokens:
    """The scoped tokens of one server, in ``path`` (owner-only JSON)."""

    def __init__(self, path: Path, damaged: DamagedFiles | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._damaged = damaged or DamagedFiles()

    def create(
        self,
        owner: TokenOwner,
        scope: str,
        notebook: str | None,
        seconds: float | None,
        *,
        now: float | None = None,
        agent: str | None = None,
    ) -> tuple[AccessToken, str]:
        """A new token; returns its record and the token itself (shown once)."""
        if scope not in SCOPES:
            raise BadRequest(f"'scope' must be one of: {', '.join(SCOPES)}.")
        if seconds is not None and not 0 < seconds <= MAX_SECONDS:
            raise BadRequest("'expires_in' must be between 1 second and a year.")
        now = time.time() if now is None else now
        notebook = api_path(notebook) if notebook is not None else None
        token_id = secrets.token_hex(6)
        secret = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        made = AccessToken(
            token_id, scope, notebook, now, None if seconds is None else now + seconds,
            owner, _digest(secret), agent,
        )  # fmt: skip
        with self._lock:
            tokens = self._read()
            tokens[token_id] = made
            self._write(tokens)
        return made, secret

    def listed(self, owner: TokenOwner) -> list[AccessToken]:
        """The owner's tokens, oldest first (expired ones included, until revoked)."""
        with self._lock:
            mine = [t for t in self._read().values() if t.owner.principal == owner.principal]
        return sorted(mine, key=lambda token: token.created)

    def revoke(self, owner: TokenOwner, token_id: str) -> None:
        with self._lock:
            tokens = self._read()
            found = tokens.get(token_id)
            if found is None or found.owner.principal != owner.principal:
                raise NotFound(f"No token '{token_id}' of yours.")
            del tokens[token_id]
            self._write(tokens)

    def check(self, secret: str, *, now: float | None = None) -> AccessToken | None:
        """The token ``secret`` is, if it is one and has not expired or been revoked."""
        if not secret.startswith(PREFIX):
            return None
        token_id = secret[len(PREFIX) :].split("_", 1)[0]
        with self._lock:
            found = self._read().get(token_id)
        if found is None or not hmac.compare_digest(found.digest, _digest(secret)):
            return None
        now = time.time() if now is None else now
        if found.expires is not None and now >= found.expires:
            return None
        return found

    def _read(self) -> dict[str, AccessToken]:
        # A file this store never wrote is moved aside: no token is valid then, and new
        # ones can be made (``state_files``).
        return open_or_set_aside(self._path, _load_tokens, self._damaged)

    def _write(self, tokens: dict[str, AccessToken]) -> None:
        replace_private(self._path, json.dumps([asdict(token) for token in tokens.values()]))


def _load_tokens(path: Path) -> dict[str, AccessToken]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    tokens = {}
    for item in expect(raw, list, "tokens"):
        token = _parse_token(item)
        tokens[token.id] = token
    return tokens


def _parse_token(item: Any) -> AccessToken:
    """A token as the store wrote it; :class:`Damaged` if it is not one."""
    expect(item, dict, "token")
    owner = expect(item.get("owner"), dict, "owner")
    names = ("principal", "username", "name")
    made = AccessToken(
        id=expect(item.get("id"), str, "id"),
        scope=expect(item.get("scope"), str, "scope"),
        notebook=expect(item.get("notebook"), (str, type(None)), "notebook"),
        created=expect(item.get("created"), (int, float), "created"),
        expires=expect(item.get("expires"), (int, float, type(None)), "expires"),
        owner=TokenOwner(*(expect(owner.get(name), str, name) for name in names)),
        digest=expect(item.get("digest"), str, "digest"),
        agent=expect(item.get("agent"), (str, type(None)), "agent"),
    )  # fmt: skip
    if made.scope not in SCOPES:
        raise Damaged(f"a token's scope is {made.scope!r}")
    return made


def api_path(path: Any) -> str | None:
    """A notebook path as the contents API names it (``/a//b.ipynb`` is ``a/b.ipynb``).

    Example:
        >>> api_path("/work//a.ipynb"), api_path("work/./a.ipynb"), api_path(None)
        ('work/a.ipynb', 'work/a.ipynb', None)
    """
    if not isinstance(path, str):
        return None
    return posixpath.normpath(path.strip("/")) if path.strip("/") else ""


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
