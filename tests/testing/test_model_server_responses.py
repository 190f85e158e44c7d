"""The scripted model server's Responses API (``POST /v1/responses``), read by the real
``openai`` client as Codex and other Responses-only agents read OpenAI.

The same scripts drive it as chat completions: a scripted text is streamed as
``response.output_text.delta`` events, a scripted tool call as a ``function_call`` item
with its arguments in ``response.function_call_arguments.delta`` pieces.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from jupyter_loop.testing import Reply, ScriptedModelServer, call_tools, fail, say


@pytest.fixture
def client(loop_model_server: ScriptedModelServer) -> Any:
    made = openai.OpenAI(
        base_url=loop_model_server.openai_base_url, api_key="sk-test", max_retries=0
    )
    yield made
    made.close()


def test_a_streamed_text_comes_as_output_text_deltas_between_created_and_completed(
    loop_model_server: ScriptedModelServer, client: Any
) -> None:
    loop_model_server.script(say("Hello, wörld", chunk_size=5))
    with client.responses.create(model="scripted-tools", input="hi", stream=True) as stream:
        events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.index("response.output_item.added") < kinds.index("response.output_text.delta")
    assert kinds.index("response.output_text.done") < kinds.index("response.output_item.done")
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == [
        "Hello",
        ", wör",
        "ld",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    completed = events[-1].response
    assert completed.status == "completed" and completed.output_text == "Hello, wörld"
    assert completed.usage.input_tokens > 0 and completed.usage.output_tokens > 0


def test_a_streamed_tool_call_is_a_function_call_item_with_its_arguments_in_pieces(
    loop_model_server: ScriptedModelServer, client: Any
) -> None:
    loop_model_server.script(
        call_tools(("read_cell", {"cell_id": "c1"}), text="Looking.", chunk_size=6)
    )
    tools = [{"type": "function", "name": "read_cell", "parameters": {"type": "object"}}]
    with client.responses.create(
        model="scripted-tools", input="why?", tools=tools, stream=True
    ) as stream:
        events = list(stream)
    added = [e.item for e in events if e.type == "response.output_item.added"]
    assert [item.type for item in added] == ["message", "function_call"]
    assert added[1].name == "read_cell" and added[1].arguments == ""
    pieces = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert len(pieces) > 1 and "".join(pieces) == '{"cell_id": "c1"}'
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert done.arguments == '{"cell_id": "c1"}' and done.item_id == added[1].id
    finished = [e.item for e in events if e.type == "response.output_item.done"]
    assert finished[1].call_id.startswith("call_") and finished[1].status == "completed"
    assert [item.type for item in events[-1].response.output] == ["message", "function_call"]


def test_the_answer_without_streaming_is_one_response_object(
    loop_model_server: ScriptedModelServer, client: Any
) -> None:
    loop_model_server.script(say("Plain."), call_tools(("run_cells", {"cell_ids": ["c0"]})))
    text = client.responses.create(model="scripted-tools", input="hi")
    assert text.object == "response" and text.output_text == "Plain."
    call = client.responses.create(model="scripted-tools", input="run it")
    assert [(item.type, item.name, item.arguments) for item in call.output] == [
        ("function_call", "run_cells", '{"cell_ids": ["c0"]}')
    ]
    assert loop_model_server.bodies("/v1/responses")[0]["input"] == "hi"


def test_a_function_call_output_answers_its_call_and_then_the_text_after_the_tool(
    loop_model_server: ScriptedModelServer, client: Any
) -> None:
    loop_model_server.script(
        Reply(tool_calls=call_tools(("f", {})).tool_calls, answer_after_tool="Ok")
    )
    made = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "done"},
    ]
    assert client.responses.create(model="scripted-tools", input=made).output_text == "Ok"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"input": "hi"}, "'model'"),
        ({"model": "scripted-tools"}, "'input'"),
        ({"model": "scripted-tools", "input": 3}, "'input'"),
        ({"model": "scripted-tools", "input": [{"type": "telepathy"}]}, "'input[0].type'"),
        (
            {"model": "scripted-tools", "input": [{"role": "wizard", "content": "hi"}]},
            "'input[0].role'",
        ),
        (
            {
                "model": "scripted-tools",
                "input": [{"type": "function_call_output", "call_id": "call_9", "output": "x"}],
            },
            "No tool call found for function call output with call_id call_9",
        ),
        (
            {"model": "scripted-tools", "input": [{"type": "function_call", "name": "f"}]},
            "'input[0]'",
        ),
        ({"model": "scripted-tools", "input": "hi", "tools": [{"type": "function"}]}, "'tools[0]"),
        ({"model": "scripted-tools", "input": "hi", "stream": "yes"}, "'stream'"),
    ],
)
def test_a_malformed_request_is_refused_with_a_400_that_says_why(
    loop_model_server: ScriptedModelServer, body: dict[str, Any], why: str
) -> None:
    response = httpx.post(f"{loop_model_server.openai_base_url}/responses", json=body, timeout=5)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and why in error["message"], error


def test_a_scripted_failure_is_an_openai_error_and_the_client_raises_it(
    loop_model_server: ScriptedModelServer, client: Any
) -> None:
    loop_model_server.script(fail(429, "Slow down."))
    with pytest.raises(openai.RateLimitError, match="Slow down"):
        client.responses.create(model="scripted-tools", input="hi", stream=True)


def test_a_cut_stream_ends_before_response_completed(
    loop_model_server: ScriptedModelServer, client: Any
) -> None:
    loop_model_server.script(say("A long answer that is cut off", cut_after=3))
    kinds: list[str] = []
    with pytest.raises((httpx.HTTPError, openai.APIError)):
        with client.responses.create(model="scripted-tools", input="hi", stream=True) as stream:
            kinds.extend(e.type for e in stream)
    assert "response.completed" not in kinds


def test_a_call_of_a_tool_in_a_namespace_names_the_tool_and_its_namespace(
    loop_model_server: ScriptedModelServer, client: Any
) -> None:
    # Codex offers each MCP server's tools inside a namespace tool; a model calls one by
    # its own name with the namespace beside it.
    loop_model_server.script(call_tools(("mcp__jupyter_loop__read_cell", {"cell_id": "c0"})))
    inner = [{"type": "function", "name": "read_cell", "parameters": {"type": "object"}}]
    tools = [{"type": "namespace", "name": "mcp__jupyter_loop", "description": "", "tools": inner}]
    with client.responses.create(
        model="scripted-tools", input="read", tools=tools, stream=True
    ) as stream:
        events = list(stream)
    call = next(e.item for e in events if e.type == "response.output_item.done")
    assert (call.namespace, call.name) == ("mcp__jupyter_loop", "read_cell")
