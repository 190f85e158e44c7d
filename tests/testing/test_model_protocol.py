"""The scripted model server refuses what the real APIs refuse: 400 on a protocol mistake."""

from __future__ import annotations

from typing import Any

import httpx

from jupyter_loop.testing import ScriptedModelServer, call_tools, protocol, say

PNG = "iVBORw0KGgo="


def _call(call_id: str, name: str = "read_cell") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def _asked(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": list(calls)},
    ]


def _tool(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _image_part() -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}


def _post_openai(server: ScriptedModelServer, messages: list[Any]) -> httpx.Response:
    body = {"model": "scripted-tools", "messages": messages}
    return httpx.post(f"{server.openai_base_url}/chat/completions", json=body, timeout=5)


def _post_ollama(server: ScriptedModelServer, messages: list[Any]) -> httpx.Response:
    body = {"model": "scripted-tools", "messages": messages, "stream": False}
    return httpx.post(f"{server.ollama_host}/api/chat", json=body, timeout=5)


# -- OpenAI ------------------------------------------------------------------------------


def test_openai_accepts_calls_answered_in_any_order_then_a_user_message() -> None:
    messages = [*_asked(_call("a"), _call("b")), _tool("b"), _tool("a"),
                {"role": "user", "content": "now?"}]  # fmt: skip
    assert protocol.openai_violation({"messages": messages}) is None


def test_openai_refuses_a_tool_message_without_a_preceding_call() -> None:
    messages = [{"role": "user", "content": "go"}, _tool("a")]
    assert "must be a response to a preceding message with 'tool_calls'" in str(
        protocol.openai_violation({"messages": messages})
    )


def test_openai_refuses_a_tool_message_answering_an_unknown_id() -> None:
    messages = [*_asked(_call("a")), _tool("zzz")]
    assert "'zzz'" in str(protocol.openai_violation({"messages": messages}))


def test_openai_refuses_a_call_left_unanswered_before_the_next_message() -> None:
    messages = [*_asked(_call("a"), _call("b")), _tool("a"), {"role": "user", "content": "x"}]
    assert str(protocol.openai_violation({"messages": messages})).endswith(
        "did not have response messages: b"
    )


def test_openai_refuses_the_same_id_answered_twice() -> None:
    messages = [*_asked(_call("a")), _tool("a"), _tool("a")]
    assert protocol.openai_violation({"messages": messages}) is not None


def test_openai_takes_image_parts_only_in_user_messages() -> None:
    user = {"role": "user", "content": [{"type": "text", "text": "see"}, _image_part()]}
    system = {"role": "system", "content": [_image_part()]}
    assert (
        protocol.openai_violation({"messages": [user]}),
        "only for role 'user'" in str(protocol.openai_violation({"messages": [system, user]})),
    ) == (None, True)


def test_openai_refuses_an_unknown_role_and_no_messages() -> None:
    assert (
        "'robot'" in str(protocol.openai_violation({"messages": [{"role": "robot"}]})),
        protocol.openai_violation({"messages": []}) is not None,
    ) == (True, True)


def test_server_answers_400_in_the_openai_shape_and_scripts_nothing(
    loop_model_server: ScriptedModelServer,
) -> None:
    loop_model_server.script(say("kept for the next good request"))
    bad = _post_openai(loop_model_server, [{"role": "user", "content": "go"}, _tool("a")])
    good = _post_openai(loop_model_server, [{"role": "user", "content": "go"}])
    assert (bad.status_code, bad.json()["error"]["type"], good.status_code) == (
        400,
        "invalid_request_error",
        200,
    )
    assert good.json()["choices"][0]["message"]["content"] == "kept for the next good request"


# -- Ollama ------------------------------------------------------------------------------


def _ollama_asked(*names: str) -> list[dict[str, Any]]:
    calls = [{"function": {"name": name, "arguments": {}}} for name in names]
    return [{"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": calls}]  # fmt: skip


def test_ollama_accepts_tool_results_named_after_the_calls() -> None:
    messages = [*_ollama_asked("read_cell", "run_cells"),
                {"role": "tool", "content": "1", "tool_name": "run_cells"},
                {"role": "tool", "content": "2", "tool_name": "read_cell"}]  # fmt: skip
    assert protocol.ollama_violation({"messages": messages}) is None


def test_ollama_refuses_a_tool_message_after_no_calls_or_naming_another_tool() -> None:
    stray = [{"role": "user", "content": "go"}, {"role": "tool", "content": "1"}]
    wrong = [*_ollama_asked("read_cell"), {"role": "tool", "content": "1", "tool_name": "rm"}]
    assert (
        "must follow tool calls" in str(protocol.ollama_violation({"messages": stray})),
        "'rm'" in str(protocol.ollama_violation({"messages": wrong})),
    ) == (True, True)


def test_ollama_images_must_be_base64_strings() -> None:
    good = [{"role": "user", "content": "see", "images": [PNG]}]
    bad = [{"role": "user", "content": "see", "images": ["data:image/png;base64,??"]}]
    assert (
        protocol.ollama_violation({"messages": good}),
        "base64" in str(protocol.ollama_violation({"messages": bad})),
    ) == (None, True)


def test_server_answers_400_in_the_ollama_shape(loop_model_server: ScriptedModelServer) -> None:
    response = _post_ollama(loop_model_server, [{"role": "tool", "content": "1"}])
    assert (response.status_code, "must follow tool calls" in response.json()["error"]) == (
        400,
        True,
    )


def test_a_reply_can_answer_once_its_tool_call_was_answered(
    loop_model_server: ScriptedModelServer,
) -> None:
    loop_model_server.set_default_reply(call_tools(("read_cell", {}), answer_after_tool="Seen."))
    asked = _post_openai(loop_model_server, [{"role": "user", "content": "go"}]).json()
    call = asked["choices"][0]["message"]["tool_calls"][0]
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                _tool(call["id"]), {"role": "user", "content": "now?"}]  # fmt: skip
    answered = _post_openai(loop_model_server, messages).json()
    assert answered["choices"][0]["message"]["content"] == "Seen."
