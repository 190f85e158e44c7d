"""Settings of the external channels, mixed into ``JupyterLoopApp`` (``c.JupyterLoopApp.*``)."""

from __future__ import annotations

from traitlets import Float
from traitlets.config import Configurable


class ExternalConfig(Configurable):
    """How long external agents wait for a person, and how long idle MCP sessions live."""

    external_approval_timeout = Float(
        300.0,
        config=True,
        help=(
            "Seconds an MCP client's or the terminal client's run waits for a person to "
            "approve it (approval policy 'ask' or 'turn') before it is reported as not run "
            "(default 300)."
        ),
    )

    mcp_session_idle_timeout = Float(
        1800.0,
        config=True,
        help="Seconds after which an idle MCP session is closed (default 1800).",
    )
