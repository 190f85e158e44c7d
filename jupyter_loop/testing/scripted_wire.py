"""The bodies the scripted model server sends, in OpenAI's and Ollama's formats.

Pure functions from a :class:`~.replies.Reply` to JSON-ready values; the server only
frames and writes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from .replies import Reply, ScriptedModel

_OPENAI_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "forbidden"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
}
_DEFAULT_ERRORS = {
    400: "Bad request.",
    401: "Incorrect API key provided.",
    403: "Forbidden.",
    404: "The model does not exist.",
    429: "Rate limit reached for requests.",
}
_TIMESTAMP = "2025-01-01T00:00:00.000000Z"


def error_message(reply: Reply) -> str:
    """The failure's message, or a usual one for its status."""
    return reply.error or _DEFAULT_ERRORS.get(reply.status, "The server had an error.")


def openai_error(reply: Reply) -> dict[str, Any]:
    """An OpenAI error body."""
    kind, code = _OPENAI_ERROR_TYPES.get(reply.status, ("server_error", None))
    return {"error": {"message": error_message(reply), "type": kind, "param": None, "code": code}}


def ollama_error(reply: Reply) -> dict[str, Any]:
    """An Ollama error body."""
    return {"error": error_message(reply)}


def estimate_usage(reply: Reply, request: Mapping[str, Any]) -> tuple[int, int]:
    """The scripted usage, else about a token per four characters in and out."""
    if reply.usage is not None:
        return reply.usage
    messages = request.get("messages") or []
    read = sum(len(str(m.get("content") or "")) for m in messages if isinstance(m, Mapping))
    read += len(str(request.get("prompt") or "")) + len(str(request.get("suffix") or ""))
    written = len(reply.text) + sum(len(call.arguments_text()) for call in reply.tool_calls)
    return read // 4 + 1, written // 4 + 1


# -- OpenAI ----------------------------------------------------------------------------------


def openai_chunks(
    reply: Reply,
    *,
    model: str,
    completion_id: str,
    usage: tuple[int, int],
    include_usage: bool,
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed answer.

    Text comes in small chunks; each tool call starts with a chunk holding its id and name,
    then its arguments in pieces; then a chunk with the finish reason and, if asked for,
    one with the usage and no choices.
    """
    base: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": 1735689600,
        "model": model,
        "system_fingerprint": "fp_scripted",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        made = {**base, "choices": [choice]}
        if include_usage:
            made["usage"] = None
        return made

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in reply.pieces(reply.text)]
    for index, call in enumerate(reply.tool_calls):
        opening = {
            "index": index,
            "id": call.id or f"call_{completion_id[-6:]}_{index}",
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [opening]}))
        chunks += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in reply.pieces(call.arguments_text())
        ]
    chunks.append(chunk({}, reply.resolved_finish_reason or None))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": _openai_usage(usage)})
    return chunks


def openai_completion(
    reply: Reply, *, model: str, completion_id: str, usage: tuple[int, int]
) -> dict[str, Any]:
    """A non-streamed ``chat.completion``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{completion_id[-6:]}_{index}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text()},
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": reply.resolved_finish_reason or None,
    }
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 1735689600,
        "model": model,
        "choices": [choice],
        "usage": _openai_usage(usage),
    }


def _openai_usage(usage: tuple[int, int]) -> dict[str, int]:
    return {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}


def openai_models(models: Sequence[ScriptedModel]) -> dict[str, Any]:
    """The ``GET /v1/models`` list."""
    data = [
        {"id": m.name, "object": "model", "created": 1735689600, "owned_by": "scripted"}
        for m in models
    ]
    return {"object": "list", "data": data}


# -- Ollama ----------------------------------------------------------------------------------


def ollama_parts(reply: Reply, *, model: str, usage: tuple[int, int]) -> list[dict[str, Any]]:
    """The NDJSON parts of a streamed ``/api/chat`` answer.

    Tool calls come whole in one part, with object arguments and no ids, as Ollama sends
    them; the last part says ``done`` and carries the token counts.
    """
    parts = [_part(model, {"role": "assistant", "content": p}) for p in reply.pieces(reply.text)]
    if reply.tool_calls:
        message = {"role": "assistant", "content": "", "tool_calls": _ollama_calls(reply)}
        parts.append(_part(model, message))
    parts.append(_done(reply, model, usage, {"role": "assistant", "content": ""}))
    return parts


def ollama_response(reply: Reply, *, model: str, usage: tuple[int, int]) -> dict[str, Any]:
    """A non-streamed ``/api/chat`` answer."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = _ollama_calls(reply)
    return _done(reply, model, usage, message)


def ollama_generate_parts(
    reply: Reply, *, model: str, usage: tuple[int, int]
) -> list[dict[str, Any]]:
    """The NDJSON parts of a streamed ``/api/generate`` answer; the last says ``done``."""
    parts: list[dict[str, Any]] = [
        {"model": model, "created_at": _TIMESTAMP, "response": piece, "done": False}
        for piece in reply.pieces(reply.text)
    ]
    done: dict[str, Any] = {
        "model": model,
        "created_at": _TIMESTAMP,
        "response": "",
        "done": True,
        "total_duration": 1_000_000,
        "prompt_eval_count": usage[0],
        "eval_count": usage[1],
    }
    if reply.resolved_finish_reason:
        done["done_reason"] = reply.resolved_finish_reason
    return [*parts, done]


def _ollama_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "function": {
                "name": call.name,
                "arguments": call.arguments
                if isinstance(call.arguments, str)
                else dict(call.arguments),
            }
        }
        for call in reply.tool_calls
    ]


def _part(model: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"model": model, "created_at": _TIMESTAMP, "message": message, "done": False}


def _done(
    reply: Reply, model: str, usage: tuple[int, int], message: dict[str, Any]
) -> dict[str, Any]:
    done = {**_part(model, message), "done": True, "total_duration": 1_000_000}
    if reply.resolved_finish_reason:
        done["done_reason"] = reply.resolved_finish_reason
    done.update({"prompt_eval_count": usage[0], "eval_count": usage[1]})
    return done


def ollama_tags(models: Sequence[ScriptedModel]) -> dict[str, Any]:
    """The ``GET /api/tags`` list."""
    return {
        "models": [
            {
                "name": m.name,
                "model": m.name,
                "modified_at": _TIMESTAMP,
                "size": 1_000_000,
                "digest": hashlib.sha256(m.name.encode()).hexdigest(),
                "details": _details(m),
            }
            for m in models
        ]
    }


def ollama_show(model: ScriptedModel) -> dict[str, Any]:
    """The ``POST /api/show`` answer; ``capabilities`` is left out when None."""
    info: dict[str, Any] = {
        "general.architecture": model.family,
        f"{model.family}.context_length": model.context_length,
    }
    if model.capabilities and "vision" in model.capabilities:
        info[f"{model.family}.vision.image_size"] = 560
    shown: dict[str, Any] = {
        "modelfile": f"FROM {model.name}\n",
        "parameters": "stop <|eot_id|>",
        "template": model.template,
        "details": _details(model),
        "model_info": info,
        "modified_at": _TIMESTAMP,
    }
    if model.capabilities is not None:
        shown["capabilities"] = list(model.capabilities)
    return shown


def _details(model: ScriptedModel) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": model.family,
        "families": [model.family],
        "parameter_size": "8B",
        "quantization_level": "Q4_K_M",
    }


def has_images(body: Mapping[str, Any]) -> bool:
    """Whether a chat request carries images (OpenAI ``image_url`` parts, Ollama ``images``)."""
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        if message.get("images"):
            return True
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(part, Mapping) and part.get("type") == "image_url" for part in content
        ):
            return True
    return False
