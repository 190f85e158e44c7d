"""A cell's ``input()`` during an agent's run, asked of the person at the agent's client
too (:class:`~.asking.DirectPrompt`), not only in the tabs.

A run an agent started may stop on ``input()``. Its prompt is shown in every tab
(``execution/prompts.py``); while the agent's call waits for the run, the same prompt is
put to the person at the client, and an answer from there is handed to the execution
service as a tab's answer is (the first one wins; the other is refused as answered). A
password prompt is left to the tabs: MCP forbids asking for secrets in a client's form.
Rejected: following the prompts by observing the shared document, which would tie this
to a transaction's callbacks; the wait is at a person's pace, so a poll of the cells'
markers every :data:`POLL_SECONDS` is enough and stops with the call. A run no call waits
for any more (an MCP task's, after its server restarted) is followed until its cells have
run instead.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..errors import Conflict, JupyterLoopError
from ..execution import board
from ..execution.payloads import InputReply
from ..records import InputRequest
from .asking import DirectPrompt

if TYPE_CHECKING:
    from ..execution.service import ExecutionService

POLL_SECONDS = 0.2


async def answer_prompts(
    execution: ExecutionService,
    path: str,
    cell_ids: list[str],
    direct: DirectPrompt,
    *,
    while_running: bool = False,
) -> None:
    """Until cancelled (the call stops waiting), or with ``while_running`` until none of
    ``cell_ids`` runs or waits to, put each prompt of ``cell_ids`` to the person once."""
    if direct.ask_input is None:
        return
    asked: set[str] = set()
    try:
        while not while_running or await _any_pending(execution, path, cell_ids):
            for cell_id in cell_ids:
                request = await _prompt(execution, path, cell_id)
                if request is None or request.password or request.request_id in asked:
                    continue
                asked.add(request.request_id)
                await _ask_one(execution, path, cell_id, request, direct)
            await asyncio.sleep(POLL_SECONDS)
    except JupyterLoopError:  # the notebook went: nothing left to ask about
        return


async def _any_pending(execution: ExecutionService, path: str, cell_ids: list[str]) -> bool:
    pending = {entry["cell_id"] for entry in await execution.pending(path)}
    return not pending.isdisjoint(cell_ids)


async def _prompt(execution: ExecutionService, path: str, cell_id: str) -> InputRequest | None:
    _, notebook = await execution.live_notebook(path)
    entry = board.marker(notebook, cell_id)
    return None if entry is None else entry.input


async def _ask_one(
    execution: ExecutionService,
    path: str,
    cell_id: str,
    request: InputRequest,
    direct: DirectPrompt,
) -> None:
    """Ask, and stop asking once the prompt is gone (answered in a tab, the run ended)."""
    assert direct.ask_input is not None
    asking = asyncio.ensure_future(direct.ask_input(cell_id, request.prompt))
    try:
        while not asking.done():
            shown = await _prompt(execution, path, cell_id)
            if shown is None or shown.request_id != request.request_id:
                return
            await asyncio.wait([asking], timeout=POLL_SECONDS)
        value = asking.result()
    finally:
        asking.cancel()
    if value is None:  # dismissed there: a tab may still answer
        return
    try:
        await execution.answer_input(InputReply(path, cell_id, request.request_id, value))
    except Conflict:  # answered in a tab meanwhile
        pass
