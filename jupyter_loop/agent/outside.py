"""What agents outside JupyterLab call (the MCP endpoint, the terminal client): the
assistant's tools, offered to them. Not an agent itself: a gateway to the same services.
What they read is :mod:`.outside_reads`; this module adds what they do.

One service, several channels: an external call goes through the same :class:`Toolbox`
as the server's own agent (reading, proposing, running), the same context builder for the
notebook as the assistant sees it, the same masker, the same approval desk (answered from
any tab through the REST approval endpoint) and the same journal. Nothing here knows of
HTTP or MCP: the channels authorize, parse and call one method.

An external client is not a turn. Its proposals carry an ``x…`` turn id (one per client
name and notebook, so a client sees the status of its own proposals), its approval is shown
in the notebook's ``approval`` slot like a turn's (and, when the caller brings a
:class:`~.asking.DirectPrompt` and the administrator lets clients answer approvals, in its
own client too: by default a client's host, which might answer its own form with no person
involved, cannot approve its runs), and under ``ask`` a run waits for a
person at most :attr:`OutsideAgents.approval_timeout` seconds, then reports that nobody
answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import replace
from typing import Any

from ..document import LiveDocuments
from ..errors import Conflict
from ..execution.payloads import RunRequest
from ..execution.run import RunOutcome
from ..execution.run_origin import ACP, MCP, RunOrigin
from ..execution.service import ExecutionService
from ..records import ApprovalRequest
from ..secrets import SecretMasker
from .approvals import ApprovalDesk
from .asking import ApprovalPath, Asking, DirectPrompt
from .callers import Caller
from .direct_inputs import answer_prompts
from .journal import AgentJournal
from .outside_reads import RESULT_CHARS, OutsideReads, file_id_of, where_people_are
from .shared_turn import current_approval, show_approval
from .tools import Toolbox, ToolboxSetup, ToolOutcome

STATUS_HINT = "Call proposal_status with its id to learn whether it was accepted."
"""Where an outside agent learns a proposal's fate (it has no working memory)."""


class NotebookSlot:
    """An external client's request is shown in the notebook's one approval slot."""

    def __init__(self, docs: LiveDocuments, room_id: str) -> None:
        self._docs = docs
        self._room_id = room_id

    async def show(self, approval: ApprovalRequest) -> None:
        notebook = await self._docs.notebook(self._room_id)
        if current_approval(notebook) is not None:
            raise Conflict("Another approval is waiting in this notebook; try again later.")
        await show_approval(self._docs, self._room_id, approval)

    async def hide(self, answered: bool) -> None:
        await show_approval(self._docs, self._room_id, None)


class OutsideAgents(OutsideReads):
    """Tool calls of external agents on live notebooks (see the module docstring)."""

    def __init__(
        self,
        docs: LiveDocuments,
        execution: ExecutionService,
        desk: ApprovalDesk,
        approvals: ApprovalPath,
        journal: AgentJournal,
        masker: SecretMasker | None,
        policy: str,
        log: logging.Logger,
        approval_timeout: float = 300.0,
        server_journal: AgentJournal | None = None,
    ) -> None:
        super().__init__(docs, execution, journal, masker, server_journal)
        self._desk = desk
        self._approvals = approvals
        self.policy = policy
        self.approval_timeout = approval_timeout
        self.client_approvals = False
        """Whether an MCP client's form may answer its own run's approval
        (``JupyterLoopApp.mcp_client_approvals``); else only a person in a tab or at the
        terminal client answers it. A cell's ``input()`` is asked in the client either way."""
        self._log = log

    async def stop(self) -> None:
        """Nothing to stop: the waits for runs are the execution service's."""

    # -- the agent's tools -------------------------------------------------------------

    async def call(
        self,
        path: str,
        name: str,
        arguments: dict[str, Any],
        caller: Caller,
        wait: float,
        *,
        run_all: bool = False,
    ) -> ToolOutcome:
        """One of the agent's tools (read_cell, propose_*, run_cells), as the agent calls it.

        ``arguments``: already checked by the channel against the schema it showed its
        client, which holds the tool's (:func:`~.tools.args.given`, ``schema_violation``).

        ``wait``: seconds a run may take before the call returns with the cells still
        running (they run on; ``get_outputs`` shows them later). ``run_all``: the cells
        are every code cell (the run history says "Run All").
        """
        room_id = await self._docs.room_id(path)
        session = caller.session_in(room_id)

        def record(action: str, **details: Any) -> None:
            self._journal.record(file_id_of(room_id), session, action, caller.label, **details)

        setup = ToolboxSetup(
            room_id,
            session,
            approve=lambda ids, sources: self._approve(room_id, session, ids, sources, caller),
            run=lambda ids, hashes, approval: self._run(
                path, ids, hashes, approval, caller, wait, run_all
            ),
            read_variables=lambda: self._execution.variables(path),
            record=record,
            result_chars=RESULT_CHARS,
            masker=self._masker,  # reads cells masked, before paging or summarising them
            result_images=True,  # no context of its own to carry a cell's images
            shown_as=caller.shown_as,
            status_hint=STATUS_HINT,
        )
        toolbox = Toolbox(self._docs, setup)
        # The channel checked the arguments (the one check): no detour through JSON text.
        outcome = await toolbox.call_checked(name, arguments)
        self._record(
            room_id,
            caller,
            name,
            ok=outcome.ok,
            arguments=outcome.arguments,
            receipt=outcome.summary,
        )
        return outcome

    async def current_cell(self, path: str, caller: Caller) -> str:
        """The cell the caller's person has active in their tab (what "this cell" means to
        them), read as ``read_cell`` reads it; when they have none, who has which cell.
        Without a person of that name, the one cell anybody has active, if just one."""
        room_id = await self._docs.room_id(path)
        people = self._docs.people(room_id)
        active = [p for p in people if p.focus is not None and p.focus.cell_id]
        chosen = [p for p in active if p.name == caller.user] or (
            active if len(active) == 1 else []
        )
        if not chosen or chosen[0].focus is None or chosen[0].focus.cell_id is None:
            notebook = await self._docs.notebook(room_id) if people else None
            numbers = (
                {str(c.get("id")): i + 1 for i, c in enumerate(notebook.ycells)} if notebook else {}
            )
            where = where_people_are(people, numbers) or "Nobody has it open now.\n"
            return (
                f"{json.dumps(caller.user)} has no cell of {path} active in a tab now, so "
                f'"this cell" names none.\n{where}'
            )
        person, cell_id = chosen[0], chosen[0].focus.cell_id
        outcome = await self.call(path, "read_cell", {"cell_id": cell_id}, caller, 0.0)
        return (
            f"The cell {json.dumps(person.name)} has active in {path}: id {cell_id}.\n\n"
            f"{outcome.summary}\n\n{outcome.content}"
        )

    async def _run(
        self,
        path: str,
        cell_ids: list[str],
        hashes: dict[str, str],
        approval: str,
        caller: Caller,
        wait: float,
        run_all: bool,
    ) -> dict[str, RunOutcome]:
        kernel_id = await self._execution.ensure_kernel(path)
        request = RunRequest(
            path=path, cell_ids=tuple(cell_ids), kernel_id=kernel_id, source_hashes=hashes
        )
        # A client that stops waiting (time-out, disconnect) leaves the cells running.
        channel, client = (ACP, caller.agent) if caller.agent else (MCP, caller.client)
        origin = RunOrigin(caller.user, channel, client=client, approval=approval, run_all=run_all)
        prompts = (
            None
            if caller.direct is None
            else asyncio.ensure_future(
                answer_prompts(self._execution, path, cell_ids, caller.direct)
            )
        )
        try:
            outcomes = await self._execution.run_and_wait(request, caller.label, wait, origin)
        finally:
            if prompts is not None:  # the call stops waiting: the tabs keep the prompt
                prompts.cancel()
        return {
            cell_id: replace(o, note=f"{o.note}; call get_outputs later")
            if o.status == "running"
            else o
            for cell_id, o in outcomes.items()
        }

    async def run_status(self, path: str, caller: Caller) -> str:
        """What a run of ``caller``'s about to start waits for first, in words for the
        agent (an MCP task's first status): a person's approval only when one is needed."""
        if self.policy == "never":
            return "Not running: running cells is switched off (approval policy 'never')."
        room_id = await self._docs.room_id(path)
        if not self._approvals.will_ask(self.policy, _allowance(caller, room_id)):
            return "Running the cells."
        where = "a notebook tab or 'jupyter loop approve'"
        if self.client_approvals and caller.direct is not None:
            where += ", or the form in your client"
        return f"Waiting for a person to approve the run ({where}), then running."

    async def ask_while_running(self, path: str, cell_ids: list[str], direct: DirectPrompt) -> None:
        """Put the cells' ``input()`` prompts to ``direct`` until the cells have run: for
        a run no call waits for any more (an MCP task of an earlier server process)."""
        await answer_prompts(self._execution, path, cell_ids, direct, while_running=True)

    async def _approve(
        self,
        room_id: str,
        session: str,
        cell_ids: list[str],
        sources: dict[str, str],
        caller: Caller,
    ) -> tuple[bool, str, str]:
        """The server's approval policy, through the one approval path; a person answers
        in any tab. An "allow for this turn" is remembered for the caller's principal on
        the session the server minted for it (never for what a header says), or not."""
        journal = file_id_of(room_id)

        def record(action: str, **details: Any) -> None:
            self._journal.record(journal, session, action, caller.label, **details)

        try:
            answer = await self._approvals.ask(
                Asking(
                    room_id=room_id,
                    turn_id=session,
                    cell_ids=tuple(cell_ids),
                    sources=sources,
                    policy=self.policy,
                    slot=NotebookSlot(self._docs, room_id),
                    record=record,
                    allowance=_allowance(caller, room_id),
                    requested_by=caller.label,
                    timeout=self.approval_timeout,
                    # The one place an agent's own client is let answer its approval.
                    direct=caller.direct if self.client_approvals else None,
                )
            )
        finally:
            self._desk.forget_turn(session)  # an external session has no end to wait for
        return answer.allowed, answer.reason, answer.approval_id

    # -- kernels -----------------------------------------------------------------------

    async def interrupt(self, path: str, caller: Caller) -> str:
        """Interrupt the notebook's kernel (queued cells are dropped, as from a tab)."""
        kernel_id = await self._execution.interrupt(path)
        room_id = await self._docs.room_id(path)
        self._record(room_id, caller, "interrupt", ok=True, receipt=f"interrupted {kernel_id}")
        return kernel_id


def _allowance(caller: Caller, room_id: str) -> tuple[str, str, str] | None:
    """What an "allow for this turn" of ``caller`` is remembered under: its principal on
    the session the server minted for it (never what a header says), or nothing."""
    return (caller.principal, caller.connection, room_id) if caller.connection else None
