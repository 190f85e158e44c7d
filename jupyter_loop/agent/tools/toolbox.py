"""The toolbox a turn (or an outside client's call) uses, and the registry of its tools.

A tool never raises into the turn: a bad call (unknown tool, arguments that are not a JSON
object or break the tool's schema (:mod:`.args`), an unknown cell) comes back as a failed
:class:`~.outcome.ToolOutcome` whose text tells the model what went wrong, so it can correct
itself, and the turn shows it as a notice. Running cells is :mod:`.running`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from jupyter_ydoc import YNotebook

from ...access.rights import Ability
from ...document import CellNotFound, LiveDocuments, find_cell
from ...errors import JupyterLoopError
from ...execution import board
from ...execution.kernel.introspect import VariablesReport
from ...execution.kernel.introspect import describe as describe_variables
from ...notebook_view.notebook_map import cell_line
from ...notebook_view.snapshot import read_cell
from ...notebook_view.summary import (
    ImageAttachment,
    clean_text,
    head_tail,
    summarize_output,
    summarize_outputs,
)
from ...providers import BadToolArguments, ToolCall, ToolSpec
from ...secrets import SecretMasker
from .. import proposals
from .args import ToolError, given, schema_violation
from .args import arg_int as _int
from .args import arg_optional_int as _optional_int
from .args import arg_str as _str
from .args import arg_text as _text
from .outcome import ToolOutcome, failed, short_arguments
from .running import Approve, CellRunner, Run
from .specs import TOOL_SPECS

MAX_MAP_LINES = 200

ReadVariables = Callable[[], Awaitable[VariablesReport]]
"""Reads the kernel's user variables (raises a ``JupyterLoopError`` when it cannot)."""
Record = Callable[..., None]


@dataclass(frozen=True)
class ToolboxSetup:
    """What a toolbox is built from: where it works, how much it may show, and what it asks
    of whoever uses it (a turn of the panel's assistant, or one outside agent's call).

    One record rather than a dozen constructor arguments: the two users fill in the same
    fields, and a new one is a field with a default, not an edit of every call.
    """

    room_id: str
    turn_id: str
    approve: Approve
    """Asks for approval to run cells (the one approval path)."""
    run: Run | None
    """Runs cells; None: the user may not run (``run_cells`` fails before asking)."""
    read_variables: ReadVariables
    record: Record
    """Journals an action of the call."""
    result_chars: int
    masker: SecretMasker | None
    """Cells are read masked, before anything is cut."""
    withheld: frozenset[Ability] = frozenset()
    """The abilities the user lacks: their tools are not offered."""
    result_images: bool = False
    shown_as: str = ""
    """The agent's name in the notebook's tabs ("": not shown)."""
    status_hint: str = "Its status appears in your working memory."
    """Where the agent learns a proposal's fate: the panel's model has a working memory,
    an outside agent has none and asks ``proposal_status``."""


class Toolbox:
    """Runs the tool calls of one turn against the live notebook."""

    def __init__(self, docs: LiveDocuments, setup: ToolboxSetup) -> None:
        self._docs = docs
        self._status_hint = setup.status_hint
        self._shown_as = setup.shown_as
        self._masker = setup.masker
        self._room_id = setup.room_id
        self._turn_id = setup.turn_id
        self._read_variables = setup.read_variables
        self._record = setup.record
        self._chars = max(1_000, setup.result_chars)
        self._result_images = setup.result_images
        self._runner = CellRunner(
            self._notebook,
            approve=setup.approve,
            run=setup.run,
            record=setup.record,
            result_chars=self._chars,
            masker=setup.masker,
            result_images=setup.result_images,
        )
        self._tools = {t.spec.name: t for t in AGENT_TOOLS if t.ability not in setup.withheld}
        self.specs: tuple[ToolSpec, ...] = tuple(t.spec for t in self._tools.values())
        """The tools offered: those whose ability the user has (``withheld``: those not)."""

    async def call(self, call: ToolCall) -> ToolOutcome:
        """Run one call of the model (its arguments JSON text, not yet trusted: parsed and
        checked against the tool's schema here); failures come back as ``ok=False``
        outcomes."""
        shown = self._shown(call.arguments_json)
        try:
            tool = self._tool(call.name)
            try:
                arguments = given(call.arguments(), tool.spec.parameters)
            except BadToolArguments as e:
                raise ToolError(
                    f"The arguments of '{call.name}' are not a JSON object ({e.message}). "
                    "Call it again with a JSON object."
                ) from None
            problem = schema_violation(arguments, tool.spec.parameters)
            if problem is not None:
                raise ToolError(
                    f"{problem} Call {call.name} again with arguments as its schema says."
                )
        except ToolError as e:
            return failed(call.name, e.message, shown)
        return await self._run(tool, arguments, shown)

    async def call_checked(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one call whose channel has already checked its arguments (:func:`given`,
        :func:`schema_violation`) against a schema holding this tool's (the MCP endpoint
        lists it with the notebook's path added): checked once, not turned back into JSON
        text and checked again."""
        shown = self._shown(json.dumps(arguments))
        try:
            tool = self._tool(name)
        except ToolError as e:
            return failed(name, e.message, shown)
        return await self._run(tool, arguments, shown)

    def _shown(self, arguments_json: str) -> str:
        """The arguments as the journal and the tabs show them: the model's own text,
        masked whole, then shortened."""
        if self._masker is not None:
            arguments_json = self._masker.mask(arguments_json)
        return short_arguments(arguments_json)

    def _tool(self, name: str) -> AgentTool:
        tool = self._tools.get(name)  # a withheld tool is not there for this user
        if tool is None:
            raise ToolError(
                f"There is no tool named '{name}'. The tools are: {', '.join(self._tools)}."
            )
        return tool

    async def _run(self, tool: AgentTool, arguments: dict[str, Any], shown: str) -> ToolOutcome:
        name = tool.spec.name
        try:
            if self._shown_as:
                self._docs.agents.show(
                    self._room_id, self._shown_as, _cell_named(arguments), tool.activity
                )
            outcome = await tool.handler(self, arguments)
            if self._shown_as and name == "run_cells":
                self._show_while_running(arguments, tool.activity)
        except ToolError as e:
            return failed(name, e.message, shown)
        except CellNotFound as e:
            return failed(name, f"{e.message} Use cell ids from the notebook map.", shown)
        return replace(outcome, arguments=shown)

    async def _notebook(self) -> YNotebook:
        return await self._docs.notebook(self._room_id)

    def _show_while_running(self, arguments: dict[str, Any], activity: str) -> None:
        """A run the call stopped waiting for goes on: the agent stays shown on the cell
        running until its cells are done (tabs would forget it 30 s after its call)."""
        cell_ids = [str(c) for c in arguments.get("cell_ids") or []]

        async def running_now() -> str | None:
            notebook = await self._notebook()
            for cell_id in cell_ids:
                found = board.marker(notebook, cell_id)
                if found is not None and found.state in (board.QUEUED, board.RUNNING):
                    return cell_id
            return None

        self._docs.agents.keep_while(self._room_id, self._shown_as, activity, running_now)

    # -- reading ---------------------------------------------------------------------

    async def _notebook_map(self, args: dict[str, Any]) -> ToolOutcome:
        start = max(1, _int(args, "start", 1)) - 1  # the model counts cells from 1
        count = min(_int(args, "count", 100), MAX_MAP_LINES)
        notebook = await self._notebook()
        total = len(notebook.ycells)
        end = min(total, start + count)
        lines = [f"{total} cells; cells {start + 1}-{end} (number id type [count] first line)"]
        with notebook.ydoc.transaction():
            for index in range(start, end):
                lines.append(cell_line(read_cell(notebook.ycells[index], self._masker), index))
        if end < total:
            lines.append(f"(more: call notebook_map with start={end + 1})")
        text = head_tail("\n".join(lines), self._chars).text
        return ToolOutcome(text, f"read the notebook map (cells {start + 1}-{end})")

    async def _read_cell(self, args: dict[str, Any]) -> ToolOutcome:
        cell_id = _str(args, "cell_id")
        output_index = _optional_int(args, "output_index")
        offset = _int(args, "offset", 0)
        notebook = await self._notebook()
        index, ycell = find_cell(notebook, cell_id)
        cell = read_cell(ycell, self._masker)  # offsets count the masked text's characters
        where = f"cell {index + 1}"
        if output_index is not None:
            if not 0 <= output_index < len(cell.outputs):
                raise ToolError(f"Cell '{cell_id}' has {len(cell.outputs)} outputs.")
            output = cell.outputs[output_index]
            raw = _raw_output_text(output, self._chars)
            page = head_tail(raw, self._chars, offset, clean=True)
            text = f"cell {cell_id} output [{output_index}] from offset {offset}:\n{page.text}"
            image = summarize_output(output, 0, attach_images=self._result_images)[1]
            return ToolOutcome(
                text, f"read an output of {where}", "", True, (cell_id,),
                images=(image,) if image is not None and offset == 0 else (),
            )  # fmt: skip
        header = "cell " + cell_line(cell, index, with_source=False, with_outputs=False)
        source = head_tail(cell.source, self._chars // 2 if cell.outputs else self._chars, offset)
        text = f"{header}\nsource:\n{source.text}"
        images: tuple[ImageAttachment, ...] = ()
        if cell.outputs and offset == 0:
            room = self._chars - len(text) - 20
            summary = summarize_outputs(
                cell.outputs, max(200, room), model_takes_images=self._result_images
            )
            text += "\noutputs:\n" + summary.text
            images = summary.images
        elif not cell.outputs:
            text += "\noutputs: none"
        return ToolOutcome(
            text, f"read {where}", _one_line(cell.source), True, (cell_id,), images=images
        )

    async def _list_variables(self, args: dict[str, Any]) -> ToolOutcome:
        try:
            report = await self._read_variables()
        except JupyterLoopError as e:
            text = f"Not available: {e.message}"
            return ToolOutcome(text, "could not list the variables", e.message, False)
        text = describe_variables(report, self._chars)
        return ToolOutcome(text, f"listed the kernel's variables ({report.total})")

    # -- proposing -------------------------------------------------------------------

    async def _propose(self, **fields: Any) -> tuple[proposals.Proposed, int | None]:
        async with self._docs.edit(self._room_id) as notebook:
            proposed = proposals.create(notebook, turn_id=self._turn_id, **fields)
        proposal = proposed.proposal
        index = None
        if proposal.cell_id is not None:
            index = find_cell(notebook, proposal.cell_id)[0]
        self._record(
            "proposal",
            proposal_id=proposal.id,
            kind=proposal.kind,
            cell_id=proposal.cell_id,
            summary=proposal.summary,
            replaced=list(proposed.replaced),
        )
        return proposed, index

    async def _propose_modify(self, args: dict[str, Any]) -> ToolOutcome:
        cell_id = _str(args, "cell_id")
        source = _text(args, "source")
        summary = _text(args, "summary")
        proposal, index = await self._propose(
            kind="modify", cell_id=cell_id, new_source=source, summary=summary
        )
        where = f"cell {(index or 0) + 1}"
        return ToolOutcome(
            _proposed(proposal, self._status_hint),
            f"proposed an edit to {where}",
            summary,
            True,
            (cell_id,),
        )

    async def _propose_insert(self, args: dict[str, Any]) -> ToolOutcome:
        after = args.get("after_cell_id")
        if after is not None and (not isinstance(after, str) or not after):
            raise ToolError("'after_cell_id' must be a cell id; leave it out to insert at the top.")
        cell_type = args.get("cell_type", "code")
        if cell_type not in ("code", "markdown", "raw"):
            raise ToolError("'cell_type' must be 'code', 'markdown' or 'raw'.")
        source = _text(args, "source")
        summary = _text(args, "summary")
        proposal, index = await self._propose(
            kind="insert", cell_id=after, new_source=source, cell_type=cell_type, summary=summary
        )
        where = "at the top" if index is None else f"after cell {index + 1}"
        focus = (after,) if after else ()
        return ToolOutcome(
            _proposed(proposal, self._status_hint),
            f"proposed a new {cell_type} cell {where}",
            summary,
            True,
            focus,
        )

    async def _propose_delete(self, args: dict[str, Any]) -> ToolOutcome:
        cell_id = _str(args, "cell_id")
        summary = _text(args, "summary")
        proposal, index = await self._propose(kind="delete", cell_id=cell_id, summary=summary)
        where = f"cell {(index or 0) + 1}"
        return ToolOutcome(
            _proposed(proposal, self._status_hint),
            f"proposed to delete {where}",
            summary,
            True,
            (cell_id,),
        )

    # -- running ---------------------------------------------------------------------

    async def _run_cells(self, args: dict[str, Any]) -> ToolOutcome:
        return await self._runner.run_cells(args)


def _proposed(proposed: proposals.Proposed, status_hint: str) -> str:
    proposal, replaced = proposed.proposal, proposed.replaced
    return (
        f"Proposal {proposal.id} ({proposal.kind}"
        f"{' cell ' + str(proposal.cell_id) if proposal.cell_id else ' at the top'}) "
        "is shown to the user, who will accept or reject it; until then the notebook is "
        f"unchanged. {status_hint}"
        + (f" It replaces your pending proposal {', '.join(replaced)}." if replaced else "")
    )


def _raw_output_text(output: dict[str, Any], budget: int) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = output.get("text", "")
        return text if isinstance(text, str) else "".join(text)
    if kind == "error":
        return clean_text("\n".join(str(line) for line in output.get("traceback") or []))
    return summarize_output(output, budget * 8)[0]


def _cell_named(arguments: dict[str, Any]) -> str | None:
    """The cell a call is about (the first, for several), for the tabs to show it on."""
    cell_id = arguments.get("cell_id") or arguments.get("after_cell_id")
    cell_ids = arguments.get("cell_ids")
    if not cell_id and isinstance(cell_ids, list) and cell_ids:
        cell_id = cell_ids[0]
    return cell_id if isinstance(cell_id, str) else None


def _one_line(text: str, limit: int = 80) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- the registry ----------------------------------------------------------------------


@dataclass(frozen=True)
class AgentTool:
    """One of the agent's tools in one record: its schema (what a model and an MCP client
    are shown, and what its arguments are checked against), the ability it needs
    (:mod:`jupyter_loop.access.rights`) and its handler. A turn is offered the tools whose ability
    its user has; the MCP endpoint lists them and refuses a call its caller lacks the
    ability for. Rejected: a name list per channel beside the handlers (they drifted)."""

    spec: ToolSpec
    ability: Ability
    handler: Callable[[Toolbox, dict[str, Any]], Awaitable[ToolOutcome]]
    activity: str
    """What the tabs show the agent doing while it calls the tool (on the cell it names)."""


def _registered(name: str, ability: Ability, handler: Any, activity: str) -> AgentTool:
    return AgentTool(next(s for s in TOOL_SPECS if s.name == name), ability, handler, activity)


AGENT_TOOLS: tuple[AgentTool, ...] = (
    _registered("notebook_map", Ability.READ, Toolbox._notebook_map, "reading the notebook"),
    _registered("read_cell", Ability.READ, Toolbox._read_cell, "reading"),
    _registered("list_variables", Ability.VARIABLES, Toolbox._list_variables, "reading variables"),
    _registered("propose_modify", Ability.PROPOSE, Toolbox._propose_modify, "proposing a change"),
    _registered("propose_insert", Ability.PROPOSE, Toolbox._propose_insert, "proposing a cell"),
    _registered("propose_delete", Ability.PROPOSE, Toolbox._propose_delete, "proposing a deletion"),
    _registered("run_cells", Ability.RUN, Toolbox._run_cells, "running"),
)
AGENT_TOOLS_BY_NAME = {tool.spec.name: tool for tool in AGENT_TOOLS}
