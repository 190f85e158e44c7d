"""Request checks of the scripted model server: what the real APIs refuse, it refuses too.

A protocol mistake in the agent (a ``tool`` message that answers no call, a call left
unanswered, an image where the API takes none) must fail a test, as it fails against OpenAI
or Ollama. The Responses API (Codex's) is checked as strictly: a tool call's output that
answers no earlier call, or a call left unanswered, is refused. Each function returns the
error message the real API would give (reworded), or ``None`` for a request it accepts;
the server answers 400 with it.

Example:
    >>> call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    >>> openai_violation({"messages": [{"role": "user", "content": "hi"},
    ...     {"role": "assistant", "content": None, "tool_calls": [call]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}) is None
    True
    >>> why = openai_violation({"messages": [{"role": "tool", "tool_call_id": "c9"}]})
    >>> why.startswith("Invalid parameter: messages with role 'tool' must be a response")
    True
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool")
OLLAMA_ROLES = ("system", "user", "assistant", "tool")


def openai_violation(body: Any) -> str | None:
    """Why OpenAI's chat completions would refuse ``body`` (None: it would not).

    Checks roles, that every ``tool`` message answers a ``tool_call_id`` of the assistant
    message just before it (through other tool messages), that every call is answered
    before the next other message, and that image parts come only in user messages.
    """
    messages = _messages(body)
    if isinstance(messages, str):
        return messages
    waiting: set[str] | None = None  # ids of the last assistant tool calls not yet answered
    for number, message in enumerate(messages):
        role = message.get("role")
        if role not in OPENAI_ROLES:
            return f"Invalid value for 'messages[{number}].role': '{role}'."
        if role == "tool":
            call_id = message.get("tool_call_id")
            if waiting is None:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceding message with 'tool_calls' (message {number})."
                )
            if call_id not in waiting:
                return (
                    f"Invalid parameter: 'tool_call_id' {call_id!r} of message {number} "
                    "answers no pending tool call."
                )
            waiting.discard(call_id)
            continue
        if waiting:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(sorted(waiting))}"
            )
        waiting = None
        if _has_image_part(message.get("content")) and role != "user":
            return f"Invalid 'messages[{number}]': image content parts are only for role 'user'."
        if role == "assistant" and message.get("tool_calls"):
            ids = _openai_call_ids(message["tool_calls"])
            if isinstance(ids, str):
                return f"Invalid 'messages[{number}].tool_calls': {ids}"
            waiting = set(ids)
    if waiting:
        return f"Tool calls without response messages at the end: {', '.join(sorted(waiting))}"
    return None


def ollama_violation(body: Any) -> str | None:
    """Why Ollama's ``/api/chat`` would refuse ``body`` (None: it would not).

    Checks roles, that a ``tool`` message follows an assistant message with ``tool_calls``
    (through other tool messages) and that its ``tool_name`` names one of those calls, and
    that ``images`` are base64 strings.
    """
    messages = _messages(body)
    if isinstance(messages, str):
        return messages
    called: set[str] | None = None
    for number, message in enumerate(messages):
        role = message.get("role")
        if role not in OLLAMA_ROLES:
            return f"invalid role {role!r} in message {number}"
        images = message.get("images")
        if images is not None and not _base64_list(images):
            return f"illegal base64 data in the images of message {number}"
        if role == "tool":
            if called is None:
                return f"message {number}: a tool message must follow tool calls"
            name = message.get("tool_name")
            if name is not None and name not in called:
                return f"message {number}: tool_name {name!r} names no tool that was called"
            continue
        called = None
        if role == "assistant" and message.get("tool_calls"):
            names = _ollama_call_names(message["tool_calls"])
            if names is None:
                return f"message {number}: each tool call needs a function name and arguments"
            called = names
    return None


RESPONSES_ROLES = ("system", "developer", "user", "assistant")
RESPONSES_ITEMS = (
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "reasoning",
    "local_shell_call",
    "local_shell_call_output",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "image_generation_call",
    "code_interpreter_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "compaction",
    "item_reference",
)
_ANSWERS = {"function_call_output": "function_call", "custom_tool_call_output": "custom_tool_call"}


def responses_violation(body: Any) -> str | None:
    """Why OpenAI's Responses API would refuse ``body`` (None: it would not).

    Checks ``model``, ``input`` (a string or a list of items of known types; messages with
    a known role and image parts only from the user), that every tool call's output answers
    a call made earlier in the input and that every call is answered (the API keeps no
    state here: ``previous_response_id`` names nothing), ``tools`` and ``stream``.
    """
    if not isinstance(body, Mapping) or not isinstance(body.get("model"), str):
        return "Missing required parameter: 'model'."
    if body.get("previous_response_id") is not None:
        return f"Previous response with id '{body['previous_response_id']}' not found."
    if "stream" in body and not isinstance(body["stream"], bool):
        return "Invalid type for 'stream': expected a boolean."
    tools = _tools_violation(body.get("tools"))
    if tools is not None:
        return tools
    items = body.get("input")
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return "Invalid type for 'input': expected a string or an array of input items."
    called: dict[str, str] = {}  # call_id -> the type of the call
    answered: set[str] = set()
    for number, item in enumerate(items):
        why = _item_violation(item, number, called, answered)
        if why is not None:
            return why
    unanswered = sorted(set(called) - answered)
    if unanswered:
        return f"No tool output found for function call {unanswered[0]}."
    return None


def _item_violation(
    item: Any, number: int, called: dict[str, str], answered: set[str]
) -> str | None:
    if not isinstance(item, Mapping):
        return f"Invalid type for 'input[{number}]': expected an object."
    kind = item.get("type", "message" if "role" in item else None)
    if kind not in RESPONSES_ITEMS:
        return f"Invalid value for 'input[{number}].type': {kind!r}."
    if kind == "message":
        role = item.get("role")
        if role not in RESPONSES_ROLES:
            return f"Invalid value for 'input[{number}].role': {role!r}."
        content = item.get("content")
        if not isinstance(content, (str, list)):
            return f"Invalid type for 'input[{number}].content': expected a string or an array."
        images = isinstance(content, list) and any(
            isinstance(part, Mapping) and part.get("type") == "input_image" for part in content
        )
        if images and role != "user":
            return f"Invalid 'input[{number}]': image parts are only for role 'user'."
    elif kind in ("function_call", "custom_tool_call"):
        needed = ("call_id", "name", "arguments" if kind == "function_call" else "input")
        if not all(isinstance(item.get(key), str) for key in needed):
            return f"Invalid 'input[{number}]': a {kind} needs {', '.join(needed)} as strings."
        called[item["call_id"]] = kind
    elif kind in _ANSWERS:
        call_id = str(item.get("call_id"))
        if called.get(call_id) != _ANSWERS[kind]:
            return f"No tool call found for function call output with call_id {call_id}."
        if not isinstance(item.get("output"), (str, list)):
            return f"Invalid type for 'input[{number}].output': expected a string or an array."
        answered.add(call_id)
    return None


def _tools_violation(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "Invalid type for 'tools': expected an array."
    for number, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or not isinstance(tool.get("type"), str):
            return f"Missing required parameter: 'tools[{number}].type'."
        if tool["type"] in ("function", "custom", "namespace") and not isinstance(
            tool.get("name"), str
        ):
            return f"Missing required parameter: 'tools[{number}].name'."
        if tool["type"] == "namespace":
            inner = tool.get("tools")
            if not isinstance(inner, list) or _tools_violation(inner) is not None:
                return f"Invalid 'tools[{number}].tools': expected an array of named tools."
    return None


def _messages(body: Any) -> list[Mapping[str, Any]] | str:
    messages = body.get("messages") if isinstance(body, Mapping) else None
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array."
    if not all(isinstance(message, Mapping) for message in messages):
        return "Each message must be an object."
    return messages


def _has_image_part(content: Any) -> bool:
    if not isinstance(content, list):
        return False
    return any(isinstance(part, Mapping) and part.get("type") == "image_url" for part in content)


def _openai_call_ids(calls: Any) -> list[str] | str:
    if not isinstance(calls, list):
        return "must be an array."
    ids: list[str] = []
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(call.get("id"), str):
            return "each call needs an 'id' and a 'function'."
        if call.get("type") != "function" or not isinstance(function.get("arguments"), str):
            return "each call needs type 'function' and 'arguments' as a string."
        ids.append(call["id"])
    return ids


def _ollama_call_names(calls: Any) -> set[str] | None:
    if not isinstance(calls, list):
        return None
    names: set[str] = set()
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return None
        if not isinstance(function.get("arguments"), Mapping):
            return None
        names.add(function["name"])
    return names


def _base64_list(images: Any) -> bool:
    if not isinstance(images, list):
        return False
    for image in images:
        if not isinstance(image, str):
            return False
        try:
            base64.b64decode(image, validate=True)
        except (binascii.Error, ValueError):
            return False
    return True
