"""Test helpers shipped with jupyter-loop: the scripted model server.

Example:
    >>> from jupyter_loop.testing import ScriptedModelServer, call_tools, say
    >>> with ScriptedModelServer() as server:
    ...     server.script(say("Looking."), call_tools(("read_cell", {"cell_id": "c1"})))
    ...     server.pending
    2
"""

from __future__ import annotations

from .model_server import RecordedRequest, ScriptedModelServer
from .replies import (
    DEFAULT_MODELS,
    Reply,
    ScriptedCall,
    ScriptedModel,
    call_tools,
    fail,
    no_tools,
    rate_limited,
    say,
)

__all__ = [
    "DEFAULT_MODELS",
    "RecordedRequest",
    "Reply",
    "ScriptedCall",
    "ScriptedModel",
    "ScriptedModelServer",
    "call_tools",
    "fail",
    "no_tools",
    "rate_limited",
    "say",
]
