"""A turn's tool steps as the models' native messages, compacted in blocks (pure).

Each step that called tools becomes an assistant message carrying its ``tool_calls`` and one
``tool`` message per call, answering it by id (OpenAI) and naming the tool (Ollama). Results
are cut once, to a fixed share, so a step's messages are the same bytes in every later
request: each request extends the previous one and the model server's prefix cache keeps
working. When the steps outgrow their share, the oldest full steps are compacted into
one-line receipts, in a block (down to half the share) so that this happens every few steps,
not at every step; past the receipts' room the oldest steps are dropped, again in a block,
and counted.

Example:
    >>> from jupyter_loop.providers import ToolCall
    >>> step = ToolStep("Reading.", (ToolCall("call_1", "read_cell", '{"cell_id": "c1"}'),),
    ...                 (ToolResult("read_cell", '{"cell_id": "c1"}', "x = 1", call_id="call_1"),))
    >>> plan = plan_steps([step], budget_chars=4_000, result_chars=1_000, max_receipts=8)
    >>> [(m.role, m.tool_call_id) for m in step_messages([step], plan, lambda t: t)]
    [('assistant', None), ('tool', 'call_1')]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jupyter_loop.notebook_view.summary import head_tail, share_budget
from jupyter_loop.providers import ToolCall

RECEIPT_CHARS = 160
SAID_CHARS = 1_500
"""What the model wrote before calling tools, kept per step (head and tail)."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returned; ``arguments`` is a short rendering of its arguments.

    Attributes:
        call_id: The id of the call it answers (the provider's, or ``call_<n>``).
    """

    name: str
    arguments: str
    content: str
    ok: bool = True
    call_id: str = ""


@dataclass(frozen=True)
class ToolStep:
    """One step whose answer called tools: what the model said, its calls, their results
    (one result per call, in order)."""

    said: str
    calls: tuple[ToolCall, ...]
    results: tuple[ToolResult, ...]


@dataclass(frozen=True)
class StepsPlan:
    """Which steps are dropped, which compacted into receipts, which shown in full.

    Steps ``[0, dropped)`` are left out, ``[dropped, full_from)`` are receipts, the rest full.
    """

    dropped: int
    full_from: int
    result_chars: int


@dataclass(frozen=True)
class StepMessage:
    """A message of a step (``role`` ``"assistant"`` or ``"tool"``)."""

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None


def plan_steps(
    steps: Sequence[ToolStep], budget_chars: int, result_chars: int, max_receipts: int
) -> StepsPlan:
    """Replay the turn's steps in order, compacting and dropping as the turn did.

    Full steps take at most ``budget_chars``; at most ``max_receipts`` steps are receipts
    (past that, the oldest are dropped, down to half).

    The outcome depends only on the steps and the budget, so every step of a turn makes the
    same decisions for the steps before it (and the same bytes).
    """
    sizes = [_full_size(step, result_chars) for step in steps]
    dropped = full_from = 0
    for newest in range(len(steps)):
        if sum(sizes[full_from : newest + 1]) > budget_chars:
            while full_from < newest and sum(sizes[full_from : newest + 1]) > budget_chars // 2:
                full_from += 1
        if full_from - dropped > max_receipts:
            dropped = full_from - max_receipts // 2
    return StepsPlan(dropped, full_from, result_chars)


def step_messages(
    steps: Sequence[ToolStep], plan: StepsPlan, wrap: Callable[[str], str]
) -> list[StepMessage]:
    """The kept steps as messages; ``wrap`` puts notebook content in the untrusted envelope."""
    messages: list[StepMessage] = []
    for number in range(plan.dropped, len(steps)):
        step = steps[number]
        full = number >= plan.full_from
        said = head_tail(step.said, SAID_CHARS).text if full else _one_line(step.said)
        messages.append(StepMessage("assistant", said, tool_calls=step.calls))
        shares = share_budget([len(r.content) for r in step.results], plan.result_chars)
        for result, share in zip(step.results, shares, strict=True):
            body = _result_text(result, share) if full else _receipt(result)
            content = body if not result.ok else wrap(body)
            messages.append(
                StepMessage("tool", content, tool_call_id=result.call_id, tool_name=result.name)
            )
    return messages


def _result_text(result: ToolResult, share: int) -> str:
    if not result.ok:
        return f"[failed] {head_tail(result.content, share).text}"
    return head_tail(result.content, share).text


def _receipt(result: ToolResult) -> str:
    state = "ok" if result.ok else "failed"
    return _one_line(
        f"[older result, shortened] {state}: {_one_line(result.content, 80)} "
        f"({len(result.content)} chars; call the tool again to see it)",
        RECEIPT_CHARS,
    )


def _full_size(step: ToolStep, result_chars: int) -> int:
    results = sum(min(len(r.content), result_chars) for r in step.results)
    return min(len(step.said), SAID_CHARS) + min(results, result_chars) + 200 * len(step.calls)


def _one_line(text: str, limit: int = RECEIPT_CHARS) -> str:
    line = " ".join(text[: limit * 2].split())
    return line if len(line) <= limit and len(text) <= limit * 2 else line[: limit - 1] + "…"
