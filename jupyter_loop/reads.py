"""Steps a read through the contents manager waits for, set by jupyter-loop's services.

A notebook's file is read by many: a room loading it, JupyterLab's check of its hash
before a Save, an export, the CLI. Some reads must wait for the server first: a hash check
for the saves under way to be recorded (``file_guards.saved_hashes``), a read of a file that
lags the store for the file to catch up (``file_guards.lagging_files``). Each service adds
its step here, the one place that wraps ``get``; the contents manager knows none of them.

Rejected: one ``get`` wrapper per service (each a class put over the contents manager):
their order in the bases would be one more thing to keep right.

Example:
    >>> ReadAsked(content=False, type=None, require_hash=True).is_notebook_read("a.ipynb")
    False
    >>> ReadAsked(content=True, type=None, require_hash=False).is_notebook_read("a.ipynb")
    True
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReadAsked:
    """What a reader asked of ``get``."""

    content: bool
    type: str | None
    require_hash: bool

    def is_notebook_read(self, path: str) -> bool:
        """A read of a notebook's content (a room loading it, an export, the CLI)."""
        notebook = self.type == "notebook" or (self.type is None and path.endswith(".ipynb"))
        return self.content and notebook


BeforeRead = Callable[[str, ReadAsked], Awaitable[None]]
"""A step a read waits for: it gets the path and what was asked; it must not raise."""


class WaitingReads:
    """Put over an async file contents manager: ``get`` first awaits each step that a
    service added with :meth:`wait_before_reads`."""

    before_reads: tuple[BeforeRead, ...] = ()

    def wait_before_reads(self, step: BeforeRead) -> None:
        self.before_reads = (*self.before_reads, step)

    async def get(
        self,
        path: str,
        content: bool = True,
        type: str | None = None,  # noqa: A002  # jupyter_server's own parameter name
        format: str | None = None,  # noqa: A002
        require_hash: bool = False,
        **kwargs: Any,
    ) -> Any:
        asked = ReadAsked(content=content, type=type, require_hash=require_hash)
        for step in self.before_reads:
            await step(path, asked)
        return await super().get(  # type: ignore[misc]
            path, content=content, type=type, format=format, require_hash=require_hash, **kwargs
        )
