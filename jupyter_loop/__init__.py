"""jupyter-loop: notebook execution that lives on the server, and an agent that sees results."""

from __future__ import annotations

from typing import Any

try:
    from ._version import __version__
except ImportError:  # running from a source tree that was never built
    __version__ = "dev"

from .app import JupyterLoopApp


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyter-loop"}]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "jupyter_loop", "app": JupyterLoopApp}]


__all__ = ["JupyterLoopApp", "__version__"]
