"""A running cell's ``input()`` prompts: shown in the shared document, answered over REST.

The prompt is a record beside the cell (``board.set_input_request``), so every tab shows
it; the answer is echoed into the cell's stdin stream as JupyterLab's stdin widget does.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from ..errors import Conflict
from ..records import InputRequest
from . import board
from .outputs.ops import AppendStream
from .run import CellRun


def show_prompt(run: CellRun, message: dict[str, Any]) -> Coroutine[Any, Any, None]:
    """Keep the kernel's ``input_request`` on the run; the returned write shows it after
    the outputs printed before it."""
    content = message.get("content", {})
    writer = run.writer
    request = InputRequest(
        request_id=str(message["header"]["msg_id"]),
        prompt=writer.mask(str(content.get("prompt", ""))),
        password=bool(content.get("password", False)),
    )
    run.pending_input = (request, message["header"])
    cell_id = run.job.cell_id
    return writer.flush(
        then=lambda notebook, _: board.set_input_request(notebook, cell_id, request)
    )


def take_answer(
    run: CellRun | None, room_id: str, cell_id: str, request_id: str, value: str
) -> tuple[CellRun, dict[str, Any]]:
    """Check that ``run`` waits for this answer and echo it; returns the run and the
    header of the request it answers. :class:`Conflict` if the cell does not wait."""
    if run is None or (run.job.room_id, run.job.cell_id) != (room_id, cell_id):
        raise Conflict("This cell is not waiting for input.")
    if run.pending_input is None or run.pending_input[0].request_id != request_id:
        raise Conflict("This prompt has already been answered.")
    request, header = run.pending_input
    run.pending_input = None
    shown = "\u00b7" * 8 if request.password else value
    # JupyterLab's stdin widget echoes the prompt, a space, then the answer.
    run.writer.push(AppendStream("stdin", f"{request.prompt} {shown}\n"))
    return run, header


async def hide_prompt(run: CellRun) -> None:
    """The answer was sent: the prompt goes from every tab."""
    cell_id = run.job.cell_id
    await run.writer.flush(
        then=lambda notebook, _: board.set_input_request(notebook, cell_id, None)
    )
