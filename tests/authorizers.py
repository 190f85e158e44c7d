"""Authorizers set into a test server's config (``ServerApp.authorizer_class``).

Each rule comes twice: with a plain ``is_authorized`` and with an ``async def`` one, which
jupyter_server allows (its ``@authorized`` awaits the answer). A check that forgets to await
gets a coroutine, which is truthy: the async twin of every rule is what catches it.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.authorizer import Authorizer


def no_contents(action: str, resource: str) -> bool:
    """Everything is allowed but the notebooks' contents (read or write)."""
    return resource != "contents"


def read_only_contents(action: str, resource: str) -> bool:
    """Contents may be read, not written; everything else is allowed."""
    return resource != "contents" or action == "read"


def read_only(action: str, resource: str) -> bool:
    """A user who may read files (and kernels' state) but neither edit nor execute."""
    return action == "read"


def no_kernels(action: str, resource: str) -> bool:
    """Contents may be read and written; nothing may be done with kernels."""
    return resource != "kernels"


def no_terminals(action: str, resource: str) -> bool:
    """Everything is allowed but Jupyter's terminals."""
    return resource != "terminals"


def everything(action: str, resource: str) -> bool:
    """Everything is allowed, asked of the authorizer all the same (terminals included)."""
    return True


def no_access(action: str, resource: str) -> bool:
    """A user the server knows but who may do nothing."""
    return False


class NoContents(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return no_contents(action, resource)


class AsyncNoContents(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return no_contents(action, resource)


class ReadOnlyContents(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return read_only_contents(action, resource)


class AsyncReadOnlyContents(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return read_only_contents(action, resource)


class ReadOnly(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return read_only(action, resource)


class AsyncReadOnly(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return read_only(action, resource)


class NoKernels(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return no_kernels(action, resource)


class AsyncNoKernels(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return no_kernels(action, resource)


class NoTerminals(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return no_terminals(action, resource)


class AsyncNoTerminals(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return no_terminals(action, resource)


class Everything(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return everything(action, resource)


class AsyncEverything(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return everything(action, resource)


class NoAccess(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return no_access(action, resource)


class AsyncNoAccess(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return no_access(action, resource)


def both(name: str) -> list[str]:
    """The sync and async class of a rule, as ``authorizer_class`` strings to parametrize by."""
    return [f"authorizers.{name}", f"authorizers.Async{name}"]


# -- rules for one user of two (see identities.py): ada may do everything -------------------


def _bob(rule: Any, user: Any, action: str, resource: str) -> bool:
    return getattr(user, "username", "") != "bob" or rule(action, resource)


class BobNoKernels(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return _bob(no_kernels, user, action, resource)


class AsyncBobNoKernels(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return _bob(no_kernels, user, action, resource)


class BobReadOnlyContents(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return _bob(read_only_contents, user, action, resource)


class AsyncBobReadOnlyContents(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return _bob(read_only_contents, user, action, resource)


def write_only_contents(action: str, resource: str) -> bool:
    """Contents may be written, not read (a drop box); everything else is allowed."""
    return resource != "contents" or action == "write"


class BobWriteOnlyContents(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return _bob(write_only_contents, user, action, resource)


class AsyncBobWriteOnlyContents(Authorizer):
    async def is_authorized(  # type: ignore[override]
        self, handler: Any, user: Any, action: str, resource: str
    ) -> bool:
        return _bob(write_only_contents, user, action, resource)
