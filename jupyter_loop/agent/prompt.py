"""The messages of one turn's steps: the same beginning every time, the live view last.

At every step the prompt is assembled again (:mod:`.context`) from the notebook as it is
then; what must not change between the steps of a turn lives here: the envelope's nonce,
the overview of the notebook as the turn began (made at the first step), the snapshots of
cells that did not change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ..access.rights import Ability, rights_text
from ..notebook_view.snapshot import NotebookSnapshots, with_stale_marks
from ..notebook_view.vision import ImageShrinker
from ..notebook_view.vision import attach as attach_images
from ..providers import ChatMessage
from ..secrets import SecretMasker
from . import proposals
from .context import ConversationMessage, ToolStep, TurnOverview, build_context, new_nonce
from .plan import TurnPlan

MAX_FOCUS = 4
"""Cells the tools touched shown in the live view, the most recent first."""
INSTRUCTIONS = """\
Answer the user's question about this notebook, using the tools when you need more than the
notebook shown below. Tools address cells by id; in your answer, name cells by their number.
{editing} Run cells with run_cells to see their real outputs. {policy}{variables}
When you have what you need, answer in plain words, quoting the real error or output."""
EDITING = (
    "To change the notebook, propose edits (propose_modify / propose_insert / "
    "propose_delete): the user accepts or rejects them, and your working memory says which."
)
NO_EDITING = (
    f"The user may not edit this notebook (that needs {rights_text(Ability.PROPOSE)}): you "
    "cannot propose edits; say in your answer what you would change."
)
NO_VARIABLES = (
    "\nThe user may not read the kernel's variables (that needs "
    f"{rights_text(Ability.VARIABLES)}): none are shown, and list_variables is not offered."
)
POLICIES = {
    "ask": "Each run_cells call asks the user for permission first.",
    "turn": "The first run_cells call asks the user; once allowed, runs need no more asking.",
    "always": "run_cells runs at once.",
    "never": "Running cells is switched off here: ask the user to run them instead.",
}


def instructions(plan: TurnPlan) -> str:
    """The system instructions, saying what this user's rights leave out."""
    return INSTRUCTIONS.format(
        editing=EDITING if plan.may_propose else NO_EDITING,
        policy=POLICIES[plan.policy],
        variables="" if plan.may_read_variables else NO_VARIABLES,
    )


class TurnPrompt:
    """Builds each step's messages for one turn."""

    def __init__(
        self,
        plan: TurnPlan,
        history: Sequence[ConversationMessage],
        masker: SecretMasker | None,
    ) -> None:
        """``history`` and ``plan.message`` come masked; ``masker`` masks the cells read."""
        self._plan = plan
        self._conversation = [*history, ConversationMessage("user", plan.message)]
        self._snapshots = NotebookSnapshots(masker)  # cells are read masked
        self._nonce = new_nonce()
        self._overview: TurnOverview | None = None
        self._shrinker = ImageShrinker()

    async def messages(
        self,
        notebook: Any,
        *,
        steps: Sequence[ToolStep],
        touched: Sequence[str],
        notes: Sequence[str],
        variables: str,
        budget: int,
        images: bool,
        stale: dict[str, str] | None = None,
    ) -> list[ChatMessage]:
        """The system prompt and messages of the next step, within ``budget`` tokens.

        ``touched``: cells the tools touched, newest first; ``notes``: working-memory notes
        besides the proposals; ``images``: the model takes images; ``stale``: why cells'
        outputs are stale, by cell id (the run history), marked in the map.
        """
        plan = self._plan
        cells = with_stale_marks(self._snapshots.cells(notebook), stale or {})
        pointed = (plan.active_cell_id, *plan.focus_ids) if plan.active_cell_id else plan.focus_ids
        window = build_context(
            cells,
            conversation=self._conversation,
            steps=steps,
            focus_ids=touched[:MAX_FOCUS],
            detail_ids=pointed,
            memory=self._memory(notebook, notes),
            budget_tokens=budget,
            nonce=self._nonce,
            instructions=instructions(plan),
            model_takes_images=images,
            overview=self._overview,
            variables=variables,
        )
        self._overview = window.overview
        messages = [ChatMessage("system", window.system)]
        messages.extend(
            ChatMessage(
                m.role,
                m.content,
                tool_calls=m.tool_calls,
                tool_call_id=m.tool_call_id,
                tool_name=m.tool_name,
            )
            for m in window.messages
        )
        if window.images and plan.images is not None:
            shrink = self._shrinker.prepare  # decodes and resizes: off the event loop
            prepared = await asyncio.to_thread(shrink, window.images, plan.images)
            messages[-1] = attach_images(messages[-1], prepared)
        return messages

    def close(self) -> None:
        """Stop observing the notebook (the turn is over)."""
        self._snapshots.close()

    def _memory(self, notebook: Any, notes: Sequence[str]) -> list[str]:
        memory = []
        for proposal in proposals.of_turn(notebook, self._plan.turn_id):
            status = proposal.status
            if status == "pending" and proposals.is_stale(notebook, proposal):
                status = "pending but stale (the cell changed since; propose again)"
            elif proposals.is_undone(notebook, proposal):
                status = "accepted, then undone by the user (the notebook is back as before)"
            where = proposal.cell_id or "the top"
            memory.append(f"proposal {proposal.id} ({proposal.kind} {where}): {status}")
        return [*memory, *notes]
