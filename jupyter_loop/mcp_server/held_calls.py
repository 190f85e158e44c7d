"""An approval, or a cell's ``input()``, asked of a 2026-protocol client's person: the call
returns "input required" and is made again with the answer (the spec's multi-round-trip
requests).

A client on the 2026 protocol has no back-channel to ask a form on while its call waits
(the handshake protocol's ``elicitation/create`` request, :mod:`.elicitation`). It may
still say, in its request's capabilities, that it can show forms. Then a run that needs
an approval answers the call at once with an ``InputRequiredResult``: the form (the same
masked message and the same three choices) and a ``requestState``. The client shows the
form and makes the call again with the person's answer and that state; the second call
takes up the first where it waits, and answers with the run's result as any call does.
A cell of the run that stops on ``input()`` is asked the same way, with the same form as
on a back-channel; the kernel waits for the answer meanwhile, as it waits for a tab's.

So the call itself goes on here between the requests, as a *held call*: it waits for its
answers as it would with no client form, asked in every tab too, and whoever answers
first decides (a tab's answer makes the client's, when it comes, moot). Its
``requestState`` is an unguessable id, good only for the same principal; a held call
nobody takes up again is dropped :data:`KEEP_SECONDS` after it ends.

Rejected: the ``requestState`` carrying the approval's id alone, the retry answering that
approval and starting the run anew. The run would be a second call, its journal line a
second one, and a tab's answer given in between would be lost to a call no longer
waiting; and an ``input()`` could not be asked at all (the run is under way).

A request the client gives up on while the call waits (no "input required" answer went
back) ends the call: the client has no state to come back with.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..agent.asking import DirectPrompt
from .elicitation import Form, asking_by_forms

if TYPE_CHECKING:
    import mcp_types as types

KEEP_SECONDS = 600.0
"""How long a held call that ended waits for its client to come back for the result."""


Result = Any  # ``types.CallToolResult``: the SDK's types are imported on first use


def speaks_input_required(ctx: Any) -> bool:
    """Whether the request is on the 2026 protocol and its client said it can show forms."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if getattr(ctx, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS:
        return False
    connection = getattr(ctx, "connection", None) or getattr(ctx, "session", None)
    capabilities = getattr(connection, "client_capabilities", None)
    return getattr(capabilities, "elicitation", None) is not None


@dataclass
class _Held:
    principal: str
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    question: Form | None = None
    answer: asyncio.Future[Any] | None = None
    task: asyncio.Task[Result] | None = None
    ended_at: float | None = None

    async def ask(self, question: Form) -> Any:
        self.question, self.answer = question, asyncio.get_running_loop().create_future()
        self.asked.set()
        return await self.answer


class HeldCalls:
    """The calls waiting for their client to come back with its person's answer."""

    def __init__(self) -> None:
        self._calls: dict[str, _Held] = {}

    async def start(
        self, principal: str, by: str, call: Callable[[DirectPrompt], Awaitable[Result]]
    ) -> Result:
        """Run ``call`` with a prompt that asks through the client; its result, or an
        "input required" answer when it waits for an approval or an ``input()``."""
        self._drop_stale()
        state = secrets.token_urlsafe(24)
        held = self._calls[state] = _Held(principal)

        held.task = asyncio.ensure_future(call(asking_by_forms(held.ask, by)))
        held.task.add_done_callback(lambda _: setattr(held, "ended_at", time.monotonic()))
        return await self._next(state, held)

    async def resume(self, state: str, principal: str, responses: dict[str, Any] | None) -> Result:
        """Take up the held call ``state`` with the client's answers; its result, or
        another "input required" answer."""
        held = self._calls.get(state)
        if held is None or held.principal != principal:
            return _gone()
        question, answer = held.question, held.answer
        # Under the form's kind: one question is asked at a time.
        response = (responses or {}).get(question.kind) if question is not None else None
        if answer is not None and not answer.done() and response is not None:
            assert question is not None
            answer.set_result(question.answer(response))
        return await self._next(state, held)

    async def _next(self, state: str, held: _Held) -> Result:
        """Wait for the call's result or its next question to the client."""
        assert held.task is not None
        if held.answer is None or held.answer.done():
            held.asked.clear()  # answered (or withdrawn): wait for the next question
        asked = asyncio.ensure_future(held.asked.wait())
        try:
            await asyncio.wait({held.task, asked}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The client gave up on the request (its time-out, a closed connection) with no
            # "input required" to come back with: nobody will take the call up again, so
            # it ends here, its approval taken down (else the notebook's one approval slot
            # stayed taken until the approval timed out).
            held.task.cancel()
            self._calls.pop(state, None)
            raise
        finally:
            asked.cancel()
        if held.task.done():
            self._calls.pop(state, None)
            return held.task.result()
        assert held.question is not None
        return _input_required(state, held.question)

    def _drop_stale(self) -> None:
        now = time.monotonic()
        for state, held in list(self._calls.items()):
            if held.ended_at is not None and now - held.ended_at > KEEP_SECONDS:
                del self._calls[state]

    async def stop(self) -> None:
        for held in self._calls.values():
            if held.task is not None:
                held.task.cancel()
        self._calls.clear()


def _input_required(state: str, question: Form) -> types.InputRequiredResult:
    import mcp_types as types

    requests: types.InputRequests = {question.kind: question.request()}
    return types.InputRequiredResult(input_requests=requests, request_state=state)


def _gone() -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(
        content=[
            types.TextContent(
                type="text",
                text="This call no longer waits for an answer (the server restarted, or its "
                "result was taken); make the call again.",
            )
        ],
        is_error=True,
    )
