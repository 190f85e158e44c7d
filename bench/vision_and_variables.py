"""What seeing plots and variables costs: shrinking images, and reading a kernel's variables.

Shrinks a 4000×3000 and a 1600×800 PNG plot to 1024 px (first time, then from the turn's
cache), and reads the variables of a real ipykernel holding 100 variables (dataframes,
arrays, lists, scalars) through the silent introspection request, 20 times. Run by hand:

    python bench/vision_and_variables.py
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import statistics
import time

from jupyter_client.manager import AsyncKernelManager
from PIL import Image, ImageDraw

from jupyter_loop.execution.kernel.connection import KernelChannel
from jupyter_loop.execution.kernel.introspect import (
    EXPRESSION,
    EXPRESSION_KEY,
    describe,
    report_from_reply,
)
from jupyter_loop.execution.kernel.silent_read import ReplyWaiter
from jupyter_loop.notebook_view.summary import ImageAttachment
from jupyter_loop.notebook_view.vision import ImageBudget, ImageShrinker

READS = 20
SETUP = """
import numpy as np, pandas as pd
for i in range(25):
    globals()[f'df{i}'] = pd.DataFrame({f'c{j}': np.arange(1000) for j in range(20)})
    globals()[f'arr{i}'] = np.zeros((100, 100))
    globals()[f'items{i}'] = list(range(1000))
    globals()[f'n{i}'] = i * 1.5
"""


def plot(width: int, height: int) -> ImageAttachment:
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for x in range(0, width, 7):
        draw.line([(x, height // 2), (x + 7, (x * 37) % height)], fill="navy", width=3)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return ImageAttachment("image/png", base64.b64encode(buffer.getvalue()).decode())


def images() -> None:
    for width, height in ((4000, 3000), (1600, 800)):
        attachment = plot(width, height)
        shrinker = ImageShrinker()
        began = time.perf_counter()
        prepared = shrinker.prepare([attachment], ImageBudget())
        first = time.perf_counter() - began
        began = time.perf_counter()
        shrinker.prepare([attachment], ImageBudget())
        again = time.perf_counter() - began
        sent = len(prepared.parts[0].data) * 3 // 4
        original = len(attachment.base64) * 3 // 4
        print(
            f"{width}×{height} PNG {original / 1024:.0f} KB → {sent / 1024:.0f} KB: "
            f"shrunk in {first * 1000:.0f} ms, {again * 1000:.2f} ms from the cache"
        )


async def variables() -> None:
    manager = AsyncKernelManager(kernel_name="python3")
    await manager.start_kernel()
    channel = KernelChannel(manager, logging.getLogger("bench"))
    try:
        await channel.ready(60)
        client = manager.client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        await client.execute_interactive(SETUP, timeout=120)
        client.stop_channels()
        times = []
        for _ in range(READS):
            waiter = ReplyWaiter()
            began = time.perf_counter()
            msg_id = channel.evaluate({EXPRESSION_KEY: EXPRESSION}, waiter)
            reply = await asyncio.wait_for(waiter.reply, 30)
            times.append(time.perf_counter() - began)
            channel.release(msg_id)
        report = report_from_reply(reply)
        print(
            f"variables of a kernel with {report.total} of them: median "
            f"{statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms "
            f"over {READS} reads; described in {len(describe(report))} characters"
        )
    finally:
        await channel.close()
        await manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    images()
    asyncio.run(variables())
