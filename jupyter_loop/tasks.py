"""Short background tasks, owned: failures are logged, and their owner awaits them when it
stops (a task nobody holds is lost, or cut mid-write, when the server shuts down).

Example:
    >>> import asyncio, logging
    >>> async def main() -> list[str]:
    ...     done: list[str] = []
    ...     async def write(what: str) -> None:
    ...         await asyncio.sleep(0.01)
    ...         done.append(what)
    ...     tasks = BackgroundTasks(logging.getLogger("example"))
    ...     tasks.spawn(write("outputs"), "writing outputs")
    ...     await tasks.close(timeout=1)
    ...     tasks.spawn(write("too late"), "writing outputs")  # closed: not run
    ...     return done
    >>> asyncio.run(main())
    ['outputs']
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any


class BackgroundTasks:
    """The background tasks of one service; :meth:`close` awaits them.

    Args:
        log: Where failures are reported (the task's ``what`` says what failed).
    """

    def __init__(self, log: logging.Logger) -> None:
        self._log = log
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def spawn(self, coroutine: Coroutine[Any, Any, Any], what: str) -> None:
        """Run ``coroutine`` in the background; if it fails, log that ``what`` failed.

        Once the owner is closed, the coroutine is not run (its owner has stopped: the
        work it would do, such as a write into a closed room, has no one to serve).
        """
        if self._closed:
            coroutine.close()
            self._log.debug("jupyter-loop: not %s, stopping", what)
            return
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)

        def finished(done: asyncio.Task[Any]) -> None:
            self._tasks.discard(done)
            if not done.cancelled() and done.exception() is not None:
                self._log.error("jupyter-loop: %s failed", what, exc_info=done.exception())

        task.add_done_callback(finished)

    async def close(self, timeout: float) -> None:
        """Take no more tasks; wait up to ``timeout`` seconds for those under way, then
        cancel what is left and give it as long again to end."""
        self._closed = True
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
        left = list(self._tasks)
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=timeout)


def succeeded(future: asyncio.Future[Any]) -> bool:
    """``future`` is done with a result (not cancelled, no exception)."""
    return future.done() and not future.cancelled() and future.exception() is None
