"""Background tasks owned by a service: logged when they fail, awaited when it stops."""

from __future__ import annotations

import asyncio
import logging

import pytest

from jupyter_loop.tasks import BackgroundTasks


async def test_close_waits_for_the_tasks_under_way():
    tasks = BackgroundTasks(logging.getLogger("test"))
    written: list[str] = []

    async def write() -> None:
        await asyncio.sleep(0.05)
        written.append("outputs")

    tasks.spawn(write(), "writing outputs")
    await tasks.close(timeout=5)
    assert written == ["outputs"]


async def test_a_task_past_the_timeout_is_cancelled_and_ends_before_close_returns():
    tasks = BackgroundTasks(logging.getLogger("test"))
    ended: list[str] = []

    async def hang() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            ended.append("cleaned up")

    tasks.spawn(hang(), "hanging")
    await asyncio.sleep(0)
    await tasks.close(timeout=0.05)
    assert ended == ["cleaned up"]


async def test_a_failure_is_logged_with_what_failed(caplog: pytest.LogCaptureFixture):
    tasks = BackgroundTasks(logging.getLogger("test"))

    async def fail() -> None:
        raise OSError("disk full")

    tasks.spawn(fail(), "writing an input prompt")
    await tasks.close(timeout=5)
    assert "jupyter-loop: writing an input prompt failed" in caplog.text
    assert "disk full" in caplog.text


async def test_nothing_starts_once_closed():
    tasks = BackgroundTasks(logging.getLogger("test"))
    await tasks.close(timeout=1)
    started: list[str] = []

    async def write() -> None:
        started.append("late")

    tasks.spawn(write(), "writing outputs")  # no "never awaited" warning either
    await asyncio.sleep(0.01)
    assert started == []
