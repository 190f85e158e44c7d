"""Settings of the external channels, mixed into ``JupyterLoopApp`` (``c.JupyterLoopApp.*``)."""

from __future__ import annotations

from dataclasses import dataclass

from traitlets import Bool, Float, Int
from traitlets.config import Configurable


@dataclass(frozen=True)
class McpLimits:
    """The host limits the endpoint keeps within (see the traits below)."""

    result_tokens: int = 25_000
    progress_interval: float = 15.0


class ExternalConfig(Configurable):
    """How long external agents wait for a person, how long idle MCP sessions live, and
    the limits of MCP hosts the endpoint keeps within."""

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

    mcp_result_tokens = Int(
        25_000,
        min=1_000,
        config=True,
        help=(
            "Tokens (estimated) a read tool's answer to an MCP client holds at most; the "
            "rest comes in pages, each ending with the cursor to read on with (default "
            "25000: Claude Code's limit for a tool result)."
        ),
    )

    mcp_progress_interval = Float(
        15.0,
        config=True,
        help=(
            "Seconds between the progress notifications of an MCP tool call still working "
            "(a run waiting for its approval or its cells), sent when the client asked for "
            "progress: hosts that give up on a silent call (often at 60 s) keep waiting "
            "while they come (default 15; 0: none)."
        ),
    )
