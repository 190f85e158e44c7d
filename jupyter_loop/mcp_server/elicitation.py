"""An approval, or a cell's ``input()``, asked of an MCP client's person in the client
itself (the spec's elicitation).

An agent's run under the ``ask`` policy waits for a person. The person who set the agent
going is often not looking at the notebook but at the agent's own window, so when the
client says it can show a form (``elicitation`` in its capabilities, on a connection with
a back-channel), a cell's ``input()`` is asked there as well as in every tab, and so is the
run's approval when the administrator allows it (``JupyterLoopApp.mcp_client_approvals``):
the first answer wins (:class:`~jupyter_loop.agent.asking.DirectPrompt`). Not by default:
the form is answered by the client's host, which is the agent's own program and may answer
it with no person involved (a ``run`` token ran cells that way), so by default only a
person in a tab or at ``jupyter loop approve`` approves an agent's run; the gate is
:class:`~jupyter_loop.agent.outside.OutsideAgents` (``client_approvals``), the one place
every channel's approval passes. The form shows the sources as the tabs do: masked. Its
answer needs no right the call did not already need: ``run_cells`` needs the right to run,
which is the right to answer approvals (:mod:`jupyter_loop.access.rights`).

"Decline" is a denial; "cancel" (the form dismissed) is no answer, and a tab may still give
one. An ``input()`` prompt is asked the same way (:mod:`jupyter_loop.agent.direct_inputs`),
except a password prompt: the spec forbids asking for secrets in a form.

A client on the 2026 protocol has no back-channel for these requests: they are asked
through the "input required" round trip instead (:mod:`.held_calls`), the same forms.

Rejected: asking only in the client when it can (the person at the notebook could no
longer stop an agent they watch).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..agent.asking import DirectPrompt
from ..agent.payloads import Decision
from ..records import ApprovalRequest

if TYPE_CHECKING:
    import mcp_types as types

FIELD = "decision"
ANSWER = "answer"
CHOICES: tuple[tuple[Decision, str], ...] = (
    ("once", "Run them"),
    ("turn", "Run them, and allow this client's runs for the rest of its session"),
    ("deny", "Do not run them"),
)
SOURCE_CHARS = 2_000
"""Of each cell's source, shown in the form (a client's dialog is no editor)."""


def approval_message(request: ApprovalRequest) -> str:
    """What the form says: who asks, which cells, and their (masked) sources.

    Example:
        >>> request = ApprovalRequest(id="a1", turn_id="x1", cell_ids=("c1",),
        ...     sources={"c1": "print(1)"}, source_hashes={}, requested_at="",
        ...     requested_by="an MCP client of ada")
        >>> print(approval_message(request))
        an MCP client of ada asks to run 1 cell of the notebook:
        <BLANKLINE>
        cell c1:
        print(1)
    """
    count = len(request.cell_ids)
    lines = [
        f"{request.requested_by or 'An agent'} asks to run {count} "
        f"cell{'s' if count != 1 else ''} of the notebook:"
    ]
    for cell_id in request.cell_ids:
        source = request.sources.get(cell_id, "")
        if len(source) > SOURCE_CHARS:  # the sources were masked whole before this cut
            source = source[:SOURCE_CHARS] + "\n…"
        lines += ["", f"cell {cell_id}:", source]
    return "\n".join(lines)


def requested_schema() -> dict[str, Any]:
    """One required choice, each with its title (the spec's titled single-select enum)."""
    return {
        "type": "object",
        "properties": {
            FIELD: {
                "type": "string",
                "title": "Run these cells?",
                "oneOf": [{"const": value, "title": title} for value, title in CHOICES],
            }
        },
        "required": [FIELD],
    }


def input_message(cell_id: str, prompt: str) -> str:
    """The form's text for a cell's ``input()`` prompt."""
    return f"Cell {cell_id}, run by your agent, asks for input:\n\n{prompt}"


def input_schema() -> dict[str, Any]:
    """One required line of text: what ``input()`` returns."""
    return {
        "type": "object",
        "properties": {ANSWER: {"type": "string", "title": "Your answer"}},
        "required": [ANSWER],
    }


def answer_of(action: str, content: dict[str, Any] | None) -> str | None:
    """The text typed for ``input()`` (``None``: declined or dismissed, the tabs may answer).

    Example:
        >>> answer_of("accept", {"answer": "42"}), answer_of("decline", None)
        ('42', None)
    """
    value = (content or {}).get(ANSWER) if action == "accept" else None
    return value if isinstance(value, str) else None


def decision_of(action: str, content: dict[str, Any] | None) -> Decision | None:
    """The person's decision from the client's answer (``None``: they gave none).

    Example:
        >>> decision_of("accept", {"decision": "turn"}), decision_of("decline", None)
        ('turn', 'deny')
        >>> decision_of("cancel", None), decision_of("accept", {"decision": "yes"})
        (None, None)
    """
    if action == "decline":
        return "deny"
    if action != "accept" or not content:
        return None
    chosen = content.get(FIELD)
    return next((value for value, _ in CHOICES if value == chosen), None)


@dataclass(frozen=True)
class Form:
    """One question for the person at an MCP client, however it reaches them (a
    back-channel request, an "input required" answer, a task's input requests): its kind,
    text and schema, and how the client's answer reads (:func:`decision_of` or
    :func:`answer_of`; ``None``: none given)."""

    kind: str
    message: str
    schema: dict[str, Any]
    read: Callable[[str, dict[str, Any] | None], Any]

    def request(self) -> types.ElicitRequest:
        import mcp_types as types

        params = types.ElicitRequestFormParams(message=self.message, requested_schema=self.schema)
        return types.ElicitRequest(params=params)

    def answer(self, response: Any) -> Any:
        """What the client's ``ElicitResult`` (a model, or its JSON) says."""
        if isinstance(response, dict):
            action, content = response.get("action"), response.get("content")
        else:
            action, content = getattr(response, "action", None), getattr(response, "content", None)
        return self.read(str(action), content if isinstance(content, dict) else None)


APPROVAL, INPUT = "approval", "input"
"""The kinds of :class:`Form`."""


def answered_in_client(user: str) -> str:
    """Who answers a question put to an MCP client, as the journal and the tabs show it.

    >>> answered_in_client("ada")
    'ada, in the MCP client'
    """
    return f"{user}, in the MCP client"


def asking_by_forms(pose: Callable[[Form], Awaitable[Any]], by: str) -> DirectPrompt:
    """The prompt that puts an approval, or a cell's ``input()``, to the person as a form
    through ``pose``; ``by`` is how their answers are recorded."""

    async def ask(request: ApprovalRequest) -> Decision | None:
        decision: Decision | None = await pose(
            Form(APPROVAL, approval_message(request), requested_schema(), decision_of)
        )
        return decision

    async def ask_input(cell_id: str, prompt: str) -> str | None:
        answer: str | None = await pose(
            Form(INPUT, input_message(cell_id, prompt), input_schema(), answer_of)
        )
        return answer

    return DirectPrompt(ask, by, ask_input)


def client_prompt(ctx: Any, user: str, log: logging.Logger) -> DirectPrompt | None:
    """The prompt for the client behind ``ctx`` (an SDK request context, on a connection
    with a back-channel), or ``None`` when it did not say it can show a form."""
    if not shows_forms(ctx):
        return None
    return asking_by_forms(back_channel(ctx, log), answered_in_client(user))


def shows_forms(ctx: Any) -> bool:
    """Whether the client behind ``ctx`` said in ``initialize`` that it can show a form."""
    import mcp_types as types

    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    try:
        return bool(ctx.session.check_client_capability(wanted))
    except Exception:  # a connection with no handshake has no capabilities to ask
        return False


def back_channel(ctx: Any, log: logging.Logger) -> Callable[[Form], Awaitable[Any]]:
    """How a form is put to the client as a request of the server's, sent on the stream of
    the client's request behind ``ctx``: its answer read, ``None`` when it gave none."""

    async def pose(form: Form) -> Any:
        try:
            result: types.ElicitResult = await ctx.session.elicit_form(
                form.message, form.schema, related_request_id=ctx.request_id
            )
        except Exception as e:  # no back-channel, an error answer: the tabs still ask
            log.info("jupyter-loop: the MCP client was not asked (%s): %s", form.kind, e)
            return None
        return form.answer(result)

    return pose
