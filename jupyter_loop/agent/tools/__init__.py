"""The agent's tools: read the notebook, propose edits, run cells (with approval).

Few and sharp, cells addressed by id; one registry (:data:`AGENT_TOOLS`: each tool's schema,
the ability it needs and its handler) that the panel's turns, the MCP endpoint and the
rights page all read. Inside: ``specs`` (the schemas models and clients are shown),
``args`` (the one check of a call's arguments against them), ``toolbox`` (the calls of one
turn against the live notebook, and the registry), ``running`` (``run_cells``: approval,
run, what came out) and ``outcome`` (what a call gave).
"""

from .args import ToolError, given, schema_violation
from .outcome import ToolOutcome, short_arguments
from .running import Approve, Run
from .specs import TOOL_SPECS
from .toolbox import (
    AGENT_TOOLS,
    AGENT_TOOLS_BY_NAME,
    AgentTool,
    ReadVariables,
    Toolbox,
    ToolboxSetup,
)

__all__ = [
    "AGENT_TOOLS",
    "AGENT_TOOLS_BY_NAME",
    "TOOL_SPECS",
    "AgentTool",
    "Approve",
    "ReadVariables",
    "Run",
    "ToolError",
    "ToolOutcome",
    "Toolbox",
    "ToolboxSetup",
    "given",
    "schema_violation",
    "short_arguments",
]
