"""Short background tasks whose failures are logged rather than lost; future helpers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any


def spawn_logged(
    coroutine: Coroutine[Any, Any, Any], log: logging.Logger, what: str
) -> asyncio.Task[Any]:
    """Run ``coroutine`` in the background; if it fails, log ``what`` failed and why."""
    task = asyncio.ensure_future(coroutine)

    def report(done: asyncio.Task[Any]) -> None:
        if not done.cancelled() and done.exception() is not None:
            log.error("jupyter-loop: %s failed", what, exc_info=done.exception())

    task.add_done_callback(report)
    return task


def succeeded(future: asyncio.Future[Any]) -> bool:
    """``future`` is done with a result (not cancelled, no exception)."""
    return future.done() and not future.cancelled() and future.exception() is None
