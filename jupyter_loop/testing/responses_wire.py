"""The bodies of OpenAI's Responses API (``POST /v1/responses``) the scripted server sends.

Codex (and codex-acp) speak only this API, not chat completions. A scripted
:class:`~.replies.Reply` becomes a ``response`` object whose ``output`` holds a
``message`` item (its text) and one ``function_call`` item per tool call; streamed, it is
the events OpenAI sends, each numbered (``sequence_number``) and named on its ``event:``
line: ``response.created``, ``response.in_progress``, then per item
``response.output_item.added``, its text or arguments in pieces
(``response.output_text.delta``, ``response.function_call_arguments.delta``), their
``.done`` events and ``response.output_item.done``; last ``response.completed``. A
scripted call of a tool offered in a ``namespace`` tool carries that namespace. There is
no ``[DONE]`` line in this API: a stream that stops before ``response.completed`` is a
broken one (a reply whose ``finish_reason`` is ``""`` sends none, to test that).

Pure functions, as :mod:`.scripted_wire`; the request checks are in :mod:`.protocol`.

Example:
    >>> from .replies import say
    >>> events = stream_events(say("Hi"), model="m", response_id="resp_1", usage=(1, 1))
    >>> [e["type"] for e in events][:3]
    ['response.created', 'response.in_progress', 'response.output_item.added']
    >>> events[-1]["response"]["output"][0]["content"][0]["text"]
    'Hi'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .replies import Reply, ScriptedCall

_CREATED_AT = 1735689600


def sse(event: Mapping[str, Any]) -> str:
    """One event as OpenAI frames it: its type on the ``event:`` line, then its JSON."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"


def was_answered(body: Mapping[str, Any]) -> bool:
    """Whether the input holds a tool call's output (a reply's ``answer_after_tool``)."""
    items = body.get("input")
    return isinstance(items, list) and any(
        isinstance(item, Mapping) and str(item.get("type", "")).endswith("call_output")
        for item in items
    )


def estimate_usage(reply: Reply, body: Mapping[str, Any]) -> tuple[int, int]:
    """The scripted usage, else about a token per four characters in and out."""
    if reply.usage is not None:
        return reply.usage
    read = len(json.dumps(body.get("input"), ensure_ascii=False))
    read += len(str(body.get("instructions") or ""))
    written = len(reply.text) + sum(len(call.arguments_text()) for call in reply.tool_calls)
    return read // 4 + 1, written // 4 + 1


def response_object(
    reply: Reply,
    *,
    model: str,
    response_id: str,
    usage: tuple[int, int],
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole ``response`` as the non-streamed answer (and ``response.completed``)."""
    made = _skeleton(model, response_id, request or {})
    length = reply.resolved_finish_reason == "length"
    made.update(
        status="incomplete" if length else "completed",
        incomplete_details={"reason": "max_output_tokens"} if length else None,
        output=_items(reply, response_id, request or {}, done=True),
        usage=_usage(usage),
    )
    return made


def stream_events(
    reply: Reply,
    *,
    model: str,
    response_id: str,
    usage: tuple[int, int],
    request: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The events of a streamed answer, numbered from 0 (see the module docstring)."""
    started = _skeleton(model, response_id, request or {})
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": started},
        {"type": "response.in_progress", "response": started},
    ]
    opened = _items(reply, response_id, request or {}, done=False)
    finished = _items(reply, response_id, request or {}, done=True)
    for index, (item, whole) in enumerate(zip(opened, finished, strict=True)):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item["type"] == "message":
            events += _text_events(reply, whole, index)
        else:
            events += _argument_events(reply, whole, index)
        events.append({"type": "response.output_item.done", "output_index": index, "item": whole})
    if reply.resolved_finish_reason:  # "": the stream ends without its last event
        completed = response_object(
            reply, model=model, response_id=response_id, usage=usage, request=request
        )
        ended = "incomplete" if completed["status"] == "incomplete" else "completed"
        events.append({"type": f"response.{ended}", "response": completed})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def first_text_event(events: list[dict[str, Any]]) -> int:
    """The index of the first event carrying answer text (benchmarks time it)."""
    return next((n for n, e in enumerate(events) if e["type"] == "response.output_text.delta"), 0)


def _text_events(reply: Reply, item: dict[str, Any], index: int) -> list[dict[str, Any]]:
    where = {"item_id": item["id"], "output_index": index, "content_index": 0}
    part = item["content"][0]
    events: list[dict[str, Any]] = [
        {"type": "response.content_part.added", **where, "part": {**part, "text": ""}}
    ]
    events += [
        {"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []}
        for piece in reply.pieces(reply.text)
    ]
    events.append(
        {"type": "response.output_text.done", **where, "text": reply.text, "logprobs": []}
    )
    events.append({"type": "response.content_part.done", **where, "part": part})
    return events


def _argument_events(reply: Reply, item: dict[str, Any], index: int) -> list[dict[str, Any]]:
    where = {"item_id": item["id"], "output_index": index}
    events: list[dict[str, Any]] = [
        {"type": "response.function_call_arguments.delta", **where, "delta": piece}
        for piece in reply.pieces(item["arguments"])
    ]
    events.append(
        {
            "type": "response.function_call_arguments.done",
            **where,
            "name": item["name"],
            "arguments": item["arguments"],
        }
    )
    return events


def _items(
    reply: Reply, response_id: str, request: Mapping[str, Any], *, done: bool
) -> list[dict[str, Any]]:
    """The output items: the text's message (if any text, or nothing else), then the calls."""
    status = "completed" if done else "in_progress"
    items: list[dict[str, Any]] = []
    if reply.text or not reply.tool_calls:
        text = reply.text if done else ""
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        items.append(
            {
                "id": f"msg_{response_id[5:]}",
                "type": "message",
                "status": status,
                "role": "assistant",
                "content": [part] if done else [],
            }
        )
    namespaces = _namespaces(request.get("tools"))
    items += [
        _call_item(call, n, response_id, namespaces, done)
        for n, call in enumerate(reply.tool_calls)
    ]
    return items


def _call_item(
    call: ScriptedCall,
    index: int,
    response_id: str,
    namespaces: Mapping[str, frozenset[str]],
    done: bool,
) -> dict[str, Any]:
    item = {
        "id": f"fc_{response_id[5:]}_{index}",
        "type": "function_call",
        "status": "completed" if done else "in_progress",
        "call_id": call.id or f"call_{response_id[-6:]}_{index}",
        "name": call.name,
        "arguments": call.arguments_text() if done else "",
    }
    # A tool offered inside a ``namespace`` tool (Codex offers each MCP server's tools so:
    # ``mcp__jupyter_loop`` holding ``read_cell``) is called by its own name with the
    # namespace beside it, as OpenAI answers; a script names it whole,
    # ``mcp__jupyter_loop__read_cell``.
    for namespace, names in namespaces.items():
        prefix = f"{namespace}__"
        if call.name.startswith(prefix) and call.name[len(prefix) :] in names:
            item.update(name=call.name[len(prefix) :], namespace=namespace)
    return item


def _namespaces(tools: Any) -> dict[str, frozenset[str]]:
    """The ``namespace`` tools of a request: each one's name → the names of its tools."""
    found: dict[str, frozenset[str]] = {}
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, Mapping) and tool.get("type") == "namespace":
            inner = tool.get("tools")
            listed = inner if isinstance(inner, list) else []
            names = {str(t.get("name")) for t in listed if isinstance(t, Mapping)}
            found[str(tool.get("name"))] = frozenset(names)
    return found


def _skeleton(model: str, response_id: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """A response in progress: what the request asked for, no output yet."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": _CREATED_AT,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": model,
        "output": [],
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", True)),
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": bool(request.get("store", True)),
        "temperature": request.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": list(request.get("tools") or []),
        "top_p": request.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": {},
    }


def _usage(usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "input_tokens": usage[0],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage[1],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": sum(usage),
    }
