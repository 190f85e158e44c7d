"""jupyter-loop: notebook execution that lives on the server, and an agent that sees results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

try:
    from ._version import __version__
except ImportError:  # running from a source tree that was never built
    __version__ = "dev"

if TYPE_CHECKING:
    from .app import JupyterLoopApp

# The server application is imported only when asked for: ``import jupyter_loop`` also
# starts the terminal client (``jupyter loop``) and every kernel's keeper (``python -m
# jupyter_loop.keeper``), neither of which may pay seconds for jupyter_server.
# jupyter_server calls ``_jupyter_server_extension_points`` only when it loads the
# extension, so importing there costs the server nothing more.


def __getattr__(name: str) -> Any:
    if name == "JupyterLoopApp":
        from .app import JupyterLoopApp

        return JupyterLoopApp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyter-loop"}]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .app import JupyterLoopApp

    return [{"module": "jupyter_loop", "app": JupyterLoopApp}]


__all__ = ["JupyterLoopApp", "__version__"]
