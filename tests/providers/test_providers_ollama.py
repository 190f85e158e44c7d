"""OllamaProvider with the real ``ollama`` client against the scripted model server."""

from __future__ import annotations

import socket

import pytest
from loop_fixtures import collect
from loop_helpers import wait_for

from jupyter_loop.agent.settings import AgentSettings
from jupyter_loop.providers import (
    Capabilities,
    ChatMessage,
    ImagePart,
    OllamaProvider,
    ProviderError,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallsReady,
    ToolSpec,
    Usage,
)
from jupyter_loop.testing import ScriptedModel, call_tools, fail, rate_limited, say

CHAT = "/api/chat"
ASK = [ChatMessage("user", "Run the fixed cell.")]
RUN_CELLS = ToolSpec(
    "run_cells",
    "Run cells by id.",
    {
        "type": "object",
        "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
        "required": ["ids"],
    },
)


def step(provider: OllamaProvider, model: str = "scripted-tools", messages=ASK):
    return provider.stream(model=model, messages=messages, tools=[RUN_CELLS])


async def failure(provider: OllamaProvider, model: str = "scripted-tools") -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await collect(step(provider, model))
    return caught.value


# -- answers --------------------------------------------------------------------------------


async def test_text_streams_in_pieces(loop_model_server, loop_ollama_provider):
    loop_model_server.script(say("Ran it: no error now.", chunk_size=8))
    events = await collect(step(loop_ollama_provider))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert texts == ["Ran it: ", "no error", " now."]
    assert events[-1] == StreamEnd("stop")


async def test_tool_calls_get_stable_ids_and_json_arguments(
    loop_model_server, loop_ollama_provider
):
    loop_model_server.script(
        call_tools(("run_cells", {"ids": ["c3"]}), ("run_cells", {"ids": ["c4", "é"]}))
    )
    events = await collect(step(loop_ollama_provider))
    assert (
        ToolCallsReady(
            (
                ToolCall("call_0", "run_cells", '{"ids": ["c3"]}'),
                ToolCall("call_1", "run_cells", '{"ids": ["c4", "é"]}'),
            )
        )
        in events
    )
    assert events[-1] == StreamEnd("tool_calls")


async def test_usage_comes_from_the_eval_counts(loop_model_server, loop_ollama_provider):
    loop_model_server.script(say("ok", usage=(2048, 17)))
    events = await collect(step(loop_ollama_provider))
    assert [e for e in events if isinstance(e, Usage)] == [Usage(2048, 17)]


async def test_tool_results_go_back_by_tool_name(loop_model_server, loop_make_ollama_provider):
    provider = loop_make_ollama_provider(num_ctx=16384)
    history = [
        ChatMessage("user", "Plot it", images=(ImagePart("image/png", "iVBORw0KGgo="),)),
        ChatMessage(
            "assistant", "", tool_calls=(ToolCall("call_0", "run_cells", '{"ids": ["c3"]}'),)
        ),
        ChatMessage("tool", "[1]: 2", tool_call_id="call_0", tool_name="run_cells"),
    ]
    await collect(step(provider, "scripted-vision", messages=history))
    (body,) = loop_model_server.bodies(CHAT)
    assert body["messages"] == [
        {"role": "user", "content": "Plot it", "images": ["iVBORw0KGgo="]},
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "run_cells", "arguments": {"ids": ["c3"]}}}],
        },
        {"role": "tool", "content": "[1]: 2", "tool_name": "run_cells"},
    ]
    assert body["options"] == {"num_ctx": 16384}
    assert body["tools"][0]["function"]["name"] == "run_cells"
    assert body["tools"][0]["function"]["parameters"]["properties"]["ids"]["type"] == "array"


async def test_options_join_num_ctx(loop_model_server, loop_make_ollama_provider):
    provider = loop_make_ollama_provider(num_ctx=8192)
    await collect(
        provider.stream(model="scripted-tools", messages=ASK, tools=[], options={"temperature": 0})
    )
    (body,) = loop_model_server.bodies(CHAT)
    assert body["options"] == {"temperature": 0, "num_ctx": 8192}
    assert not body.get("tools")


async def test_models_are_listed(loop_ollama_provider):
    models = await loop_ollama_provider.models()
    assert [(m.id, m.provider) for m in models] == [
        ("scripted-plain", "ollama"),
        ("scripted-tools", "ollama"),
        ("scripted-vision", "ollama"),
    ]


async def test_capabilities_come_from_show(loop_make_ollama_provider):
    provider = loop_make_ollama_provider(num_ctx=16384)
    assert await provider.capabilities("scripted-vision") == Capabilities(True, True, 16384)
    assert await provider.capabilities("scripted-plain") == Capabilities(False, False, 16384)


async def test_the_context_window_is_capped_by_the_model(
    loop_model_server, loop_make_ollama_provider
):
    loop_model_server.set_models(ScriptedModel("small", context_length=2048))
    provider = loop_make_ollama_provider(num_ctx=16384)
    assert (await provider.capabilities("small")).context_window == 2048
    assert (await loop_make_ollama_provider().capabilities("small")).context_window == 2048


async def test_capabilities_of_older_ollama_are_guessed(loop_model_server, loop_ollama_provider):
    loop_model_server.set_models(
        ScriptedModel(
            "old-tools", capabilities=None, template="{{ if .Tools }}{{ .Tools }}{{ end }}"
        ),
        ScriptedModel("old-plain", capabilities=None),
    )
    assert await loop_ollama_provider.capabilities("old-tools") == Capabilities(True, False, 4096)
    assert await loop_ollama_provider.capabilities("old-plain") == Capabilities(False, False, 4096)


async def test_capabilities_of_an_unknown_model_are_not_found(loop_ollama_provider):
    with pytest.raises(ProviderError) as caught:
        await loop_ollama_provider.capabilities("llama9")
    assert caught.value.kind == "not_found"
    assert "does not have the model 'llama9' (404). Pull it with `ollama pull llama9`." in (
        caught.value.message
    )


async def test_closing_the_stream_stops_the_answer_promptly(
    loop_model_server, loop_ollama_provider
):
    loop_model_server.script(say("word " * 20, chunk_size=5, delay=0.2))
    events = step(loop_ollama_provider)
    first = await anext(events)
    await events.aclose()
    assert first == TextDelta("word ")
    # The model server saw the connection go mid-answer (the whole answer takes over 4 s):
    # an event, not a time, so a busy machine cannot fail it.
    aborted = await wait_for(lambda: loop_model_server.aborted, timeout=30)
    assert len(aborted) == 1
    loop_model_server.script(say("next"))
    assert TextDelta("next") in await collect(step(loop_ollama_provider))


# -- failures -------------------------------------------------------------------------------


async def test_an_unauthorised_request_is_an_auth_error(loop_model_server, loop_ollama_provider):
    loop_model_server.script(fail(401, "unauthorized"))
    error = await failure(loop_ollama_provider)
    assert error.kind == "auth"
    assert error.message.startswith(
        f"Ollama at {loop_model_server.ollama_host} refused the request as unauthorised (401)."
    )


async def test_rate_limits_are_retried_a_bounded_number_of_times(
    loop_model_server, loop_ollama_provider
):
    loop_model_server.script(*[rate_limited()] * 4)
    error = await failure(loop_ollama_provider)
    assert error.kind == "rate_limit"
    assert len(loop_model_server.bodies(CHAT)) == 3
    assert error.message.endswith("Still refused after 2 retries.")


async def test_no_retries_when_told_so(loop_model_server, loop_make_ollama_provider):
    loop_model_server.script(rate_limited(), say("not reached"))
    error = await failure(loop_make_ollama_provider(max_rate_limit_retries=0))
    assert error.kind == "rate_limit"
    assert len(loop_model_server.bodies(CHAT)) == 1


async def test_a_server_error_is_reported(loop_model_server, loop_ollama_provider):
    loop_model_server.script(fail(500, "llama runner process has terminated"))
    error = await failure(loop_ollama_provider)
    assert error.kind == "server"
    assert error.message == (
        f"Ollama at {loop_model_server.ollama_host} failed with an internal error (500). "
        "Ollama said: llama runner process has terminated"
    )


async def test_a_model_without_tools_says_so(loop_ollama_provider):
    error = await failure(loop_ollama_provider, model="scripted-plain")
    assert error.kind == "no_tools"
    assert error.message.startswith("The model 'scripted-plain' at Ollama at http://127.0.0.1:")
    assert "does not support tools, which the assistant needs" in error.message


async def test_a_stream_cut_midway_is_a_stream_error(loop_model_server, loop_ollama_provider):
    loop_model_server.script(say("This answer will not finish.", chunk_size=4, cut_after=2))
    seen: list[object] = []
    with pytest.raises(ProviderError) as caught:
        async for event in step(loop_ollama_provider):
            seen.append(event)
    assert caught.value.kind == "stream"
    assert "broke off in the middle of the answer" in caught.value.message
    assert seen == [TextDelta("This"), TextDelta(" ans")]


async def test_tool_arguments_that_are_not_an_object_are_a_bad_response(
    loop_model_server, loop_ollama_provider
):
    loop_model_server.script(call_tools(("run_cells", '{"ids": ["c3"'), text="Running."))
    error = await failure(loop_ollama_provider)
    assert error.kind == "bad_response"
    assert error.message.startswith(
        f"Ollama at {loop_model_server.ollama_host} sent an answer that could not be read"
    )


async def test_an_unreachable_server_is_reported(loop_make_ollama_provider):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        host = f"http://127.0.0.1:{s.getsockname()[1]}"
    error = await failure(loop_make_ollama_provider(host=host))
    assert error.kind == "unreachable"
    assert error.message.startswith(
        f"Could not reach Ollama at {host}. Check that Ollama is running"
    )
    with pytest.raises(ProviderError, match="Could not reach Ollama"):
        await loop_make_ollama_provider(host=host).models()


async def test_ollama_host_is_read_from_the_environment(loop_model_server):
    # The settings read OLLAMA_HOST, once; the provider gets what they found.
    settings = AgentSettings(
        environ={"OLLAMA_HOST": loop_model_server.ollama_host}, request_timeout=5.0
    )
    provider = settings.make_provider()
    assert isinstance(provider, OllamaProvider)
    try:
        events = await collect(step(provider))
    finally:
        await provider.aclose()
    assert TextDelta("ok") in events
    assert provider.label == f"Ollama at {loop_model_server.ollama_host}"


async def test_the_ollama_provider_reads_only_its_arguments(loop_model_server, monkeypatch):
    # One source for each setting: OLLAMA_HOST reaches a provider through the settings.
    monkeypatch.setenv("OLLAMA_HOST", loop_model_server.ollama_host)
    provider = OllamaProvider(None, timeout=5.0)
    try:
        assert provider.label == "Ollama at http://127.0.0.1:11434"
    finally:
        await provider.aclose()
