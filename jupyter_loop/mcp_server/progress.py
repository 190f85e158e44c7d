"""Progress notifications while an MCP tool call works, so its host keeps waiting.

Hosts give up on a tool call that stays silent (often at 60 s; the TypeScript SDK's
default request timeout) unless progress comes, and a run may wait minutes for a person's
approval, then for its cells. When the client gave a ``progressToken``, a call still
working sends ``notifications/progress`` every ``interval`` seconds (the SDK's
``report_progress`` sends nothing without one), saying how long it has worked.

A call cancelled by its client stops being followed at once; its own clean-up runs in
its own task, not cut short by a second cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")


async def with_progress(session: Any, call: Awaitable[T], interval: float) -> T:
    """``call``'s result; meanwhile, every ``interval`` seconds (0: never), a progress
    notification on ``session`` (the request's, which knows its progress token)."""
    working = asyncio.ensure_future(call)
    if interval <= 0:
        return await working
    started = time.monotonic()
    try:
        while True:
            done, _ = await asyncio.wait({working}, timeout=interval)
            if done:
                return working.result()
            seconds = round(time.monotonic() - started)
            with contextlib.suppress(Exception):  # a client gone: the call goes on
                await session.report_progress(
                    seconds, None, f"Still working after {seconds} s (an approval or a run)."
                )
    except asyncio.CancelledError:
        working.cancel()
        raise
