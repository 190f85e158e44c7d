"""Which ACP agents this server may start: configured ones, and presets found on PATH.

An agent is a command (argv, never a shell line) and the environment it adds to the
server's; both stay on the server (a listing says only a name, whether it can start, and
why not). A configured entry that is not well formed is listed as unavailable with the
reason, rather than stopping the server. ``allowed_agents`` (a Hub admin's) limits which
may start, as ``allowed_models`` does for models.

The presets' commands are those their projects document for ACP: Claude Code through
Zed's adapter (``claude-code-acp``), Codex through Zed's adapter (``codex-acp``), Gemini
CLI with ``--experimental-acp``, Qwen Code with ``--acp`` (0.15 calls
``--experimental-acp`` deprecated), opencode with ``acp``, fast-agent's ``fast-agent-acp``
launcher. Codex's adapter takes no flag: it reads its model provider from
``$CODEX_HOME/config.toml`` (or ``-c key=value`` overrides), and a provider other than
OpenAI's must say ``wire_api = "responses"`` (codex-acp 0.16 refuses chat completions).

Example:
    >>> catalog = AgentCatalog({"echo": {"command": ["cat"]}}, presets=False, allowed=None)
    >>> [(a.name, a.available) for a in catalog.listings()]
    [('echo', True)]
    >>> catalog.command("echo").argv
    ('cat',)
"""

from __future__ import annotations

import fnmatch
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..agent.payloads import BUILTIN_AGENT
from ..errors import Forbidden, NotFound, Unavailable

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
BUILTIN = BUILTIN_AGENT
"""The name the built-in assistant is listed under (never an ACP agent's)."""

PRESETS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "claude-code": ("Claude Code", ("claude-code-acp",)),
    "codex": ("Codex", ("codex-acp",)),
    "gemini": ("Gemini CLI", ("gemini", "--experimental-acp")),
    "qwen": ("Qwen Code", ("qwen", "--acp")),
    "opencode": ("opencode", ("opencode", "acp")),
    "fast-agent": ("fast-agent", ("fast-agent-acp",)),
}
"""Preset name → (label, argv)."""


@dataclass(frozen=True)
class AgentCommand:
    """How to start one agent: its argv and the variables added to the server's environment."""

    name: str
    label: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    preset: bool = False


@dataclass(frozen=True)
class AgentListing:
    """One agent as ``GET agents`` shows it: nothing of its command or environment."""

    name: str
    kind: str  # "builtin" or "acp"
    label: str
    available: bool
    why_not: str | None = None
    command: AgentCommand | None = field(default=None, compare=False, repr=False)

    def public(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "label": self.label,
            "available": self.available,
            "why_not": self.why_not,
        }


def _parsed(name: str, entry: Any) -> AgentCommand | str:
    """The command of a configured entry, or why it cannot be one."""
    if not NAME.match(name) or name == BUILTIN:
        return f"'{name}' is not a usable agent name (letters, digits, '.', '_', '-')"
    if not isinstance(entry, Mapping):
        return "its setting must be an object with a 'command' list"
    argv = entry.get("command")
    if (
        not isinstance(argv, (list, tuple))
        or not argv
        or not all(isinstance(part, str) and part for part in argv)
    ):
        return "its 'command' must be a non-empty list of strings"
    env = entry.get("env") or {}
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        return "its 'env' must map names to strings"
    label = entry.get("label") if isinstance(entry.get("label"), str) else None
    preset = PRESETS.get(name)
    return AgentCommand(
        name,
        label or (preset[0] if preset else name),
        tuple(argv),
        tuple(sorted(env.items())),
    )


class AgentCatalog:
    """The agents of ``acp_agents`` and the presets (see the module docstring)."""

    def __init__(
        self,
        configured: Mapping[str, Any],
        *,
        presets: bool,
        allowed: tuple[str, ...] | None,
        which: Callable[[str], str | None] = shutil.which,
    ) -> None:
        self._configured = dict(configured)
        self._presets = presets
        self._allowed = allowed
        self._which = which

    def allows(self, name: str) -> bool:
        if self._allowed is None:
            return True
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self._allowed)

    def listings(self) -> list[AgentListing]:
        """Every configured agent, then each preset not configured whose command is found."""
        found: list[AgentListing] = []
        for name, entry in self._configured.items():
            parsed = _parsed(str(name), entry)
            if isinstance(parsed, str):
                found.append(AgentListing(str(name), "acp", str(name), False, parsed))
            else:
                found.append(self._listing(parsed))
        if self._presets:
            for name, (label, argv) in PRESETS.items():
                if name in self._configured or self._which(argv[0]) is None:
                    continue
                found.append(self._listing(AgentCommand(name, label, argv, preset=True)))
        return found

    def _listing(self, command: AgentCommand) -> AgentListing:
        why = None
        if not self.allows(command.name):
            why = "not allowed on this server (c.JupyterLoopApp.allowed_agents)"
        elif self._which(command.argv[0]) is None:
            why = f"its command '{command.argv[0]}' is not found on the server"
        return AgentListing(command.name, "acp", command.label, why is None, why, command=command)

    def command(self, name: str) -> AgentCommand:
        """The command of an agent that may start now.

        Raises:
            NotFound: no agent of that name. Forbidden: not allowed here.
            Unavailable: configured, but it cannot start (command missing, bad entry).
        """
        for listing in self.listings():
            if listing.name != name:
                continue
            if not self.allows(name):
                raise Forbidden(f"The agent '{name}' is not allowed on this server.")
            if not listing.available or listing.command is None:
                raise Unavailable(f"The agent '{name}' cannot start: {listing.why_not}.")
            return listing.command
        raise NotFound(f"No agent named '{name}' on this server.")
