"""Inline completions (ghost text) informed by what the server knows of the notebook."""
