"""The server's event loop, watched: how late it runs, and what held it when it stalls.

One server carries every tab's keystrokes, kernel messages and saves on one event loop; a
callback that holds it holds them all. An admin of a team server must see that before
the users do, so the server measures it itself:

* a small task sleeps :data:`TICK` seconds and notes how much later it woke (the loop's
  *lag*); ``GET /api/jupyter-loop/status`` (and ``jupyter loop status``) report its p95
  and max over the last :data:`WINDOW` seconds;
* a watchdog thread looks at the task's last tick; once the loop has not come back for
  ``warn_after`` seconds it logs a warning with what the loop is running then: the
  current task and the loop thread's innermost frames (as ``py-spy dump`` would show). A
  callback that blocks is named while it blocks, without asyncio's debug mode (whose
  bookkeeping costs every callback; this costs one wake-up per tick).
* Python's garbage collections are timed (``gc.callbacks``): the longest in the window is
  in the status (``gc_max_ms``), and a stall's warning says when a collection is what
  holds the loop. At 20 printing notebooks a stall of 2.2 s was one full collection
  (generation 2) of the server's 265,000 objects (a ``gc.callbacks`` log beside py-spy
  under ``bench/capacity.py``; the warning named only ``_weakrefset._remove``, a weak
  reference's callback the collection ran). So :func:`freeze_startup_heap` moves what the
  server holds once started (modules, classes, the apps: objects that live as long as
  the process) out of the collector's sight (``gc.freeze``): a full collection then
  walks only what came after. Frozen 20 s into that bench run, no collection over 20 ms
  followed and the loop's longest lag fell from 1.2–2.5 s to 0.5 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass

TICK = 0.1
"""Seconds between two looks of the lag task (its own wake-up is the measurement)."""

WINDOW = 300.0
"""Seconds of lag samples kept for the status (the last five minutes)."""

STALL_WARNING = 1.0
"""Seconds the loop may not come back before the watchdog logs what holds it."""

FRAMES = 8
"""Innermost frames of the loop thread named in a stall's warning."""


@dataclass(frozen=True)
class LoopLag:
    """The event loop's lag over the last :data:`WINDOW` seconds, in milliseconds."""

    p95_ms: float
    max_ms: float
    samples: int
    stalls: int  # stalls over the warning threshold since the server started
    gc_max_ms: float = 0.0  # the longest garbage collection in the window
    frozen: int = 0  # objects kept out of the collector's sight (freeze_startup_heap)
    stall_s: float = STALL_WARNING  # what counts as a stall (``loop_stall_warning``)

    def as_json(self) -> dict[str, float | int]:
        return {
            "p95_ms": round(self.p95_ms, 1),
            "max_ms": round(self.max_ms, 1),
            "samples": self.samples,
            "stalls": self.stalls,
            "gc_max_ms": round(self.gc_max_ms, 1),
            "frozen": self.frozen,
            "stall_s": self.stall_s,
        }


def freeze_startup_heap() -> int:
    """Collect, then keep every object alive now out of later collections (``gc.freeze``);
    return how many are frozen. Call once, when the server has started: what is alive
    then lives as long as the process, and a frozen object is never collected."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


class LoopMonitor:
    """Measures the running loop's lag and names what blocks it (``start``/``stop``)."""

    def __init__(
        self,
        log: logging.Logger,
        warn_after: float = STALL_WARNING,
        tick: float = TICK,
        window: float = WINDOW,
    ) -> None:
        self._log = log
        self._warn_after = warn_after
        self._tick = tick
        self._samples: deque[tuple[float, float]] = deque(maxlen=int(window / tick) + 1)
        self._window = window
        self._beat = time.monotonic()
        self._stalls = 0
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._watchdog: threading.Thread | None = None
        self._collections: deque[tuple[float, float]] = deque(maxlen=1000)
        self._collecting: tuple[int, float] | None = None  # generation, since
        self._stopping = threading.Event()

    def start(self) -> None:
        """Start watching the running loop (call from it)."""
        if self._task is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._beat = time.monotonic()
        self._task = self._loop.create_task(self._measure(), name="jupyter-loop: loop lag")
        self._stopping.clear()
        self._watchdog = threading.Thread(
            target=self._watch, name="jupyter-loop: loop watchdog", daemon=True
        )
        self._watchdog.start()
        gc.callbacks.append(self._timed_collection)

    async def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._timed_collection)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._watchdog is not None:
            await asyncio.to_thread(self._watchdog.join, 2 * self._tick + 1)
            self._watchdog = None

    def lag(self) -> LoopLag:
        since = time.monotonic() - self._window
        lags = sorted(lag for at, lag in self._samples if at >= since)
        gc_max = max((took for at, took in self._collections if at >= since), default=0.0)
        frozen = gc.get_freeze_count()
        if not lags:
            return LoopLag(0.0, 0.0, 0, self._stalls, gc_max * 1000, frozen, self._warn_after)
        p95 = lags[min(len(lags) - 1, int(0.95 * len(lags)))]
        return LoopLag(
            p95 * 1000, lags[-1] * 1000, len(lags), self._stalls, gc_max * 1000, frozen,
            self._warn_after,
        )  # fmt: skip

    def _timed_collection(self, phase: str, info: dict[str, int]) -> None:
        """``gc.callbacks``: time each collection (on the thread that triggered it)."""
        now = time.monotonic()
        if phase == "start":
            self._collecting = (info["generation"], now)
        elif self._collecting is not None:
            self._collections.append((now, now - self._collecting[1]))
            self._collecting = None

    async def _measure(self) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(self._tick)
            self._beat = now = time.monotonic()
            self._samples.append((now, max(0.0, now - before - self._tick)))

    def _watch(self) -> None:
        """The watchdog thread: one warning per stall, while it lasts."""
        warned_for = None
        while not self._stopping.wait(self._tick):
            beat = self._beat
            if time.monotonic() - beat < self._warn_after or warned_for == beat:
                continue
            warned_for = beat
            self._stalls += 1
            collecting = self._collecting
            self._log.warning(
                "jupyter-loop: the event loop has not run for %.1f s; it is running %s%s",
                time.monotonic() - beat,
                self._running(),
                ""
                if collecting is None
                else f" (a garbage collection of generation {collecting[0]} is running, "
                f"for {time.monotonic() - collecting[1]:.1f} s)",
            )

    def _running(self) -> str:
        """The loop's current task and the loop thread's innermost frames, in one line."""
        task = None
        if self._loop is not None:  # a look-up in asyncio's table of running tasks
            with contextlib.suppress(RuntimeError):
                task = asyncio.current_task(self._loop)
        frame = sys._current_frames().get(self._loop_thread or 0)  # noqa: SLF001
        frames = traceback.extract_stack(frame)[-FRAMES:] if frame is not None else []
        where = " <- ".join(
            f"{entry.name} ({entry.filename}:{entry.lineno})" for entry in reversed(frames)
        )
        return f"{task!r}" + (f" at {where}" if where else "")
