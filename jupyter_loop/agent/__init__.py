"""The assistant: turns, tools, proposals, approvals and journal, for the panel and for
outside agents (MCP, the terminal) alike."""
