"""Completion settings, mixed into ``JupyterLoopApp`` (``c.JupyterLoopApp.completion_*``)."""

from __future__ import annotations

from traitlets import Unicode
from traitlets.config import Configurable


class CompletionConfig(Configurable):
    """Settings of inline completions (they share the assistant's provider and keys)."""

    completion_model = Unicode(
        None,
        allow_none=True,
        config=True,
        help=(
            "The model for inline completions (a small, fast one suits them). Default None: "
            "agent_model, else the provider's default. Settings → Inline Completer can "
            "name another per user."
        ),
    )
