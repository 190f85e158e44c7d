"""MCP endpoint of jupyter-loop (see :mod:`.endpoint`)."""
