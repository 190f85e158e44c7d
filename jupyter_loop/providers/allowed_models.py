"""The models an administrator allows (``c.JupyterLoopApp.allowed_models``), one rule for
every caller of a model: the assistant's turns, inline completions, the panel's picker.

A name is allowed when it matches one of the list's entries, exactly or as a shell-style
pattern (``gpt-4o*``, ``llama3.*:8b``), as an administrator writes a list once and models
gain tags and dates. A request that names another model is refused (403) with the list in
the message; when nobody names one, the configured default is used if allowed, else the
first allowed model the server lists. Rejected: filtering only the picker's list (any
script could still name a model through the REST API, and the issue was a Hub whose
allow-list was not enforced).

Example:
    >>> allowed = ModelAllowList(("gpt-4o-mini", "llama3*"))
    >>> allowed.allows("llama3.1:8b"), allowed.allows("gpt-4o")
    (True, False)
    >>> try:
    ...     allowed.check("gpt-4o")  # doctest: +ELLIPSIS
    ... except Forbidden as refused:
    ...     print(refused.status, refused.message)
    403 The model ... is not allowed on this server; allowed: gpt-4o-mini, llama3* (...).
    >>> ModelAllowList().allows("anything")
    True
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import Forbidden, Unavailable
from .base import ModelProvider


@dataclass(frozen=True)
class ModelAllowList:
    """The allowed names and patterns; ``None``: every model."""

    patterns: tuple[str, ...] | None = None

    def allows(self, model: str) -> bool:
        if self.patterns is None:
            return True
        return any(fnmatch.fnmatchcase(model, pattern) for pattern in self.patterns)

    def check(self, model: str) -> str:
        """``model`` if allowed; else :class:`Forbidden` with what is allowed."""
        if not self.allows(model):
            raise Forbidden(f"The model '{model}' is not allowed on this server; {self._said()}.")
        return model

    def only(self, models: Iterable[str]) -> list[str]:
        """The allowed ones of ``models``, in order."""
        return [model for model in models if self.allows(model)]

    async def choose(self, provider: ModelProvider, named: str | None, default: str | None) -> str:
        """The model to ask: ``named`` (checked), else ``default`` if allowed, else the
        first allowed model the server lists."""
        if named:
            return self.check(named)
        if default and self.allows(default):
            return default
        listed = self.only(info.id for info in await provider.models())
        if not listed:
            raise Unavailable(self.none_listed("agent_model"))
        return listed[0]

    def none_listed(self, setting: str) -> str:
        """What to say when the server lists no (allowed) model; ``setting``: the trait
        that names one."""
        if self.patterns is None:
            return f"The model server lists no models; pull one or set c.JupyterLoopApp.{setting}."
        return f"The model server lists no model allowed on this server; {self._said()}."

    def _said(self) -> str:
        return f"allowed: {', '.join(self.patterns or ())} (c.JupyterLoopApp.allowed_models)"
