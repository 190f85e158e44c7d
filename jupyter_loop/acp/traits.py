"""The ACP agents' settings, mixed into ``JupyterLoopApp`` (``c.JupyterLoopApp.*``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traitlets import Bool, Dict, Float, List, Unicode
from traitlets.config import Configurable

if TYPE_CHECKING:
    from ..access.tokens import AccessTokens
    from ..document import LiveDocuments
    from .kept import KeptSessions
    from .service import AcpService


class AcpConfig(Configurable):
    """Which ACP agents the server may start, and how long a turn of one may take."""

    acp_agents = Dict(
        default_value={},
        config=True,
        help=(
            "ACP agents the server may start, by name: "
            '{"NAME": {"command": ["prog", "arg", ...], "env": {"KEY": "value"}}} (on the '
            "command line as JSON). The command runs on the server with the server's "
            "environment plus env; neither is ever sent to a browser. A name of the presets "
            "(claude-code, codex, gemini, qwen, opencode, fast-agent) replaces that preset."
        ),
    )
    acp_presets = Bool(
        True,
        config=True,
        help=(
            "Offer the common ACP agents whose command is on the server's PATH "
            "(claude-code-acp, codex-acp, gemini --experimental-acp, qwen --acp, "
            "opencode acp, fast-agent-acp) without configuring them "
            "(default True)."
        ),
    )
    allowed_agents = List(
        Unicode(),
        default_value=None,
        allow_none=True,
        config=True,
        help=(
            "The ACP agents people may start, by name or shell-style pattern ('codex', "
            "'claude*'); the others are listed as not allowed and refused (403). "
            "Default None: every configured or offered agent."
        ),
    )
    acp_turn_timeout = Float(
        1800.0,
        config=True,
        help=(
            "Seconds an ACP agent's turn may take before it is cancelled (session/cancel) "
            "and ended (default 1800)."
        ),
    )
    acp_session_idle_timeout = Float(
        1800.0,
        config=True,
        help=(
            "Seconds an ACP agent's session (and its process) is kept with no turn before "
            "it is ended; its next turn starts a new session (default 1800)."
        ),
    )

    def acp_service(
        self,
        server: Any,
        docs: LiveDocuments,
        tokens: AccessTokens,
        log: logging.Logger,
        kept: KeptSessions | None = None,
    ) -> AcpService:
        """The ACP sessions' service, from these settings and the server's parts (cheap:
        nothing starts until a turn asks for an agent)."""
        from .catalog import AgentCatalog
        from .service import AcpService, AcpSettings

        allowed = None if self.allowed_agents is None else tuple(self.allowed_agents)
        catalog = AgentCatalog(self.acp_agents, presets=self.acp_presets, allowed=allowed)
        settings = AcpSettings(
            catalog=catalog,
            tokens=tokens,
            mcp_url=lambda: mcp_url_of(server),
            root_dir=Path(server.root_dir),
            contents=server.contents_manager,
            turn_timeout=self.acp_turn_timeout,
            idle_timeout=self.acp_session_idle_timeout,
            kept=kept,
        )
        return AcpService(docs, settings, log)

    def agent_environments(self) -> list[dict[str, str]]:
        """What each configured agent is given besides the server's environment: a key
        among it is masked as the server's own are (an agent may say it back)."""
        entries = [entry for entry in self.acp_agents.values() if isinstance(entry, dict)]
        environs = [entry.get("env") for entry in entries]
        return [
            {str(name): str(value) for name, value in environ.items()}
            for environ in environs
            if isinstance(environ, dict)
        ]


def mcp_url_of(server: Any) -> str | None:
    """jupyter-loop's MCP endpoint as a process on this machine reaches it (None: the
    server listens on a Unix socket, which an agent's HTTP client cannot use)."""
    if getattr(server, "sock", ""):
        return None
    ip = server.ip if server.ip not in ("", "0.0.0.0", "::", "localhost") else "127.0.0.1"
    host = f"[{ip}]" if ":" in ip else ip
    scheme = "https" if server.certfile else "http"
    return f"{scheme}://{host}:{server.port}{server.base_url}api/jupyter-loop/mcp"
