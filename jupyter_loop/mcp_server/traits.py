"""Settings of the external channels, mixed into ``JupyterLoopApp`` (``c.JupyterLoopApp.*``)."""

from __future__ import annotations

from traitlets import Bool, Float
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

    mcp_client_approvals = Bool(
        False,
        config=True,
        help=(
            "Whether an MCP client may answer the approval of its own agent's run in a form "
            "it shows (MCP elicitation). Off (default): an agent's run is approved only in a "
            "JupyterLab tab or with 'jupyter loop approve', because the client's host can "
            "answer its own form with no person involved. On: the client's form is asked "
            "too, the first answer wins, and the journal records where it was given. A "
            "cell's input() during the run is asked in the client either way (default False)."
        ),
    )

    mcp_session_idle_timeout = Float(
        1800.0,
        config=True,
        help="Seconds after which an idle MCP session is closed (default 1800).",
    )
