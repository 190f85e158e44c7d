"""OpenAIProvider with the real ``openai`` client against the scripted model server."""

from __future__ import annotations

import logging
import socket
import time

import pytest
from loop_fixtures import TEST_API_KEY, collect
from loop_helpers import wait_for

from jupyter_loop.agent.settings import AgentSettings
from jupyter_loop.errors import BadRequest
from jupyter_loop.providers import (
    BadToolArguments,
    Capabilities,
    ChatMessage,
    ImagePart,
    ImagesRefused,
    OllamaProvider,
    OpenAIProvider,
    ProviderError,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallsReady,
    ToolSpec,
    Usage,
    make_provider,
)
from jupyter_loop.providers.errors import redact
from jupyter_loop.providers.openai_wire import ToolCallAssembler
from jupyter_loop.providers.retry import RetryPolicy, parse_retry_after
from jupyter_loop.testing import ScriptedCall, call_tools, fail, no_tools, rate_limited, say

CHAT = "/v1/chat/completions"
ASK = [ChatMessage("user", "Why does cell 3 fail?")]
READ_CELL = ToolSpec(
    "read_cell",
    "Read a cell with its outputs.",
    {"type": "object", "properties": {"cell_id": {"type": "string"}}, "required": ["cell_id"]},
)


def step(provider: OpenAIProvider, model: str = "scripted-tools"):
    return provider.stream(model=model, messages=ASK, tools=[READ_CELL])


async def failure(provider: OpenAIProvider, model: str = "scripted-tools") -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await collect(step(provider, model))
    return caught.value


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- answers --------------------------------------------------------------------------------


async def test_text_streams_in_pieces(loop_model_server, loop_openai_provider):
    loop_model_server.script(say("The cell divides by zero.", chunk_size=5))
    events = await collect(step(loop_openai_provider))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert texts == ["The c", "ell d", "ivide", "s by ", "zero."]
    assert events[-1] == StreamEnd("stop")


async def test_tool_calls_split_across_chunks_are_assembled(
    loop_model_server, loop_openai_provider
):
    loop_model_server.script(
        call_tools(
            ScriptedCall("read_cell", {"cell_id": "c3"}, id="call_a"),
            ScriptedCall("read_cell", {"cell_id": "c4"}, id="call_b"),
            text="Let me look.",
            chunk_size=3,
        )
    )
    events = await collect(step(loop_openai_provider))
    ready = [e for e in events if isinstance(e, ToolCallsReady)]
    assert ready == [
        ToolCallsReady(
            (
                ToolCall("call_a", "read_cell", '{"cell_id": "c3"}'),
                ToolCall("call_b", "read_cell", '{"cell_id": "c4"}'),
            )
        )
    ]
    assert [call.arguments() for call in ready[0].calls] == [{"cell_id": "c3"}, {"cell_id": "c4"}]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me look."
    assert events[-1] == StreamEnd("tool_calls")


async def test_usage_comes_from_the_last_chunk(loop_model_server, loop_openai_provider):
    loop_model_server.script(say("ok", usage=(1200, 35)))
    events = await collect(step(loop_openai_provider))
    assert [e for e in events if isinstance(e, Usage)] == [Usage(1200, 35)]
    assert loop_model_server.bodies(CHAT)[0]["stream_options"] == {"include_usage": True}


async def test_the_request_carries_messages_tools_key_and_options(
    loop_model_server, loop_openai_provider
):
    history = [
        ChatMessage("system", "You help with notebooks."),
        ChatMessage("user", "Fix cell 3", images=(ImagePart("image/png", "iVBORw0KGgo="),)),
        ChatMessage(
            "assistant", "", tool_calls=(ToolCall("call_1", "read_cell", '{"cell_id": "c3"}'),)
        ),
        ChatMessage("tool", "ZeroDivisionError: division by zero", tool_call_id="call_1"),
    ]
    await collect(
        loop_openai_provider.stream(
            model="scripted-vision",
            messages=history,
            tools=[READ_CELL],
            options={"temperature": 0.2},
        )
    )
    (request,) = loop_model_server.requests
    assert request.headers["authorization"] == f"Bearer {TEST_API_KEY}"
    body = request.body
    assert body["model"] == "scripted-vision"
    assert body["temperature"] == 0.2
    assert body["tools"][0]["function"]["name"] == "read_cell"
    assert body["messages"][1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"cell_id": "c3"}'
    assert body["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "ZeroDivisionError: division by zero",
    }


async def test_models_are_listed(loop_openai_provider):
    models = await loop_openai_provider.models()
    assert [(m.id, m.provider) for m in models] == [
        ("scripted-plain", "openai"),
        ("scripted-tools", "openai"),
        ("scripted-vision", "openai"),
    ]


PLOT = [ChatMessage("user", "What does it show?", images=(ImagePart("image/png", "iVBORw0KG"),))]


async def test_refused_images_are_dropped_and_the_model_remembered(
    loop_model_server, loop_openai_provider
):
    loop_model_server.script(say("A plot."), say("Still."))
    events = await collect(
        loop_openai_provider.stream(model="scripted-tools", messages=PLOT, tools=[READ_CELL])
    )
    assert isinstance(events[0], ImagesRefused) and "multimodal" in events[0].message
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "A plot."
    refused, sent = loop_model_server.bodies(CHAT)
    assert refused["messages"][0]["content"][1]["type"] == "image_url"
    assert sent["messages"][0]["content"].endswith("the model does not take images.)")
    assert (await loop_openai_provider.capabilities("scripted-tools")).images is False
    later = await collect(
        loop_openai_provider.stream(model="scripted-tools", messages=PLOT, tools=[READ_CELL])
    )
    assert not any(isinstance(e, ImagesRefused) for e in later)
    assert isinstance(loop_model_server.bodies(CHAT)[2]["messages"][0]["content"], str)
    assert (await loop_openai_provider.capabilities("scripted-vision")).images is True


async def test_images_on_makes_a_refusal_an_error(loop_model_server, loop_make_openai_provider):
    provider = loop_make_openai_provider(images="on")
    with pytest.raises(ProviderError, match="multimodal"):
        await collect(provider.stream(model="scripted-tools", messages=PLOT, tools=[READ_CELL]))
    assert len(loop_model_server.bodies(CHAT)) == 1


async def test_capabilities_are_configured_or_assumed(loop_make_openai_provider):
    known = Capabilities(tools=False, images=False, context_window=8192)
    provider = loop_make_openai_provider(model_capabilities={"local-model": known})
    assert await provider.capabilities("local-model") == known
    # images: 'auto' assumes them until the server refuses; 'off' never sends them
    assert await provider.capabilities("gpt-3.5-turbo") == Capabilities(True, True, None)
    off = loop_make_openai_provider(images="off")
    assert await off.capabilities("gpt-4o-mini") == Capabilities(True, False, None)


async def test_closing_the_stream_stops_the_answer_promptly(
    loop_model_server, loop_openai_provider
):
    loop_model_server.script(say("word " * 20, chunk_size=5, delay=0.2))
    events = step(loop_openai_provider)
    first = await anext(events)
    await events.aclose()
    assert first == TextDelta("word ")
    # The model server saw the connection go mid-answer (the whole answer takes over 4 s):
    # an event, not a time, so a busy machine cannot fail it.
    aborted = await wait_for(lambda: loop_model_server.aborted, timeout=30)
    assert len(aborted) == 1
    loop_model_server.script(say("next"))
    assert TextDelta("next") in await collect(step(loop_openai_provider))


# -- failures -------------------------------------------------------------------------------


async def test_a_rejected_key_is_an_auth_error_without_the_key(
    loop_model_server, loop_openai_provider
):
    loop_model_server.script(fail(401, f"Incorrect API key provided: {TEST_API_KEY}."))
    error = await failure(loop_openai_provider)
    assert error.kind == "auth"
    assert error.message.startswith(
        f"The OpenAI-compatible server at {loop_model_server.openai_base_url} rejected the API key "
        "(401). Set OPENAI_API_KEY or c.JupyterLoopApp.openai_api_key."
    )
    assert TEST_API_KEY not in error.message
    assert TEST_API_KEY not in repr(error)
    assert TEST_API_KEY not in repr(loop_openai_provider)


async def test_the_key_stays_out_of_the_logs(loop_model_server, loop_openai_provider, caplog):
    caplog.set_level(logging.DEBUG)
    loop_model_server.script(say("fine"), fail(401, f"Incorrect API key provided: {TEST_API_KEY}"))
    await collect(step(loop_openai_provider))
    await failure(loop_openai_provider)
    assert "POST" in caplog.text or "HTTP" in caplog.text  # the clients did log
    assert TEST_API_KEY not in caplog.text


async def test_rate_limits_honour_retry_after_a_bounded_number_of_times(
    loop_model_server, loop_openai_provider
):
    loop_model_server.script(*[rate_limited(retry_after=0.15)] * 4)
    started = time.monotonic()
    error = await failure(loop_openai_provider)
    assert len(loop_model_server.bodies(CHAT)) == 3  # max_rate_limit_retries=2, plus the first
    assert time.monotonic() - started >= 0.3
    assert error.kind == "rate_limit"
    assert error.retry_after == 0.15
    assert error.status == 429
    assert "limiting the rate of requests (429)" in error.message
    assert error.message.endswith("Still refused after 2 retries.")


async def test_a_rate_limit_that_clears_is_invisible(loop_model_server, loop_openai_provider):
    loop_model_server.script(rate_limited(retry_after=0), say("fine"))
    events = await collect(step(loop_openai_provider))
    assert TextDelta("fine") in events
    assert len(loop_model_server.bodies(CHAT)) == 2


async def test_a_wait_longer_than_the_cap_fails_at_once(loop_model_server, loop_openai_provider):
    loop_model_server.script(rate_limited(retry_after=120))
    error = await failure(loop_openai_provider)
    assert error.kind == "rate_limit"
    assert error.message.endswith("It asked to wait 120 s.")
    assert len(loop_model_server.bodies(CHAT)) == 1


async def test_a_server_error_is_reported(loop_model_server, loop_openai_provider):
    loop_model_server.script(fail(500, "The server had an error while processing your request."))
    error = await failure(loop_openai_provider)
    assert error.kind == "server"
    assert "failed with an internal error (500)" in error.message
    assert "while processing your request" in error.message
    assert len(loop_model_server.bodies(CHAT)) == 1


async def test_a_model_without_tools_says_so(loop_model_server, loop_openai_provider):
    loop_model_server.script(no_tools("tinyllama"))
    scripted = await failure(loop_openai_provider)
    by_model = await failure(loop_openai_provider, model="scripted-plain")
    for error, model in ((scripted, "scripted-tools"), (by_model, "scripted-plain")):
        assert error.kind == "no_tools"
        assert error.message.startswith(f"The model '{model}' at ")
        assert "does not support tools" in error.message


async def test_an_unknown_model_is_not_found(loop_model_server, loop_openai_provider):
    loop_model_server.script(fail(404, "The model `gpt-9` does not exist."))
    error = await failure(loop_openai_provider, model="gpt-9")
    assert error.kind == "not_found"
    assert "does not know the model 'gpt-9' (404)" in error.message


async def test_a_stream_cut_midway_is_a_stream_error(loop_model_server, loop_openai_provider):
    loop_model_server.script(say("This answer will not finish.", chunk_size=4, cut_after=3))
    seen: list[object] = []
    with pytest.raises(ProviderError) as caught:
        async for event in step(loop_openai_provider):
            seen.append(event)
    assert caught.value.kind == "stream"
    assert "broke off in the middle of the answer" in caught.value.message
    assert seen == [TextDelta("This"), TextDelta(" ans")]


async def test_a_stream_without_a_finish_reason_is_a_stream_error(
    loop_model_server, loop_openai_provider
):
    loop_model_server.script(say("Half", finish_reason=""))
    error = await failure(loop_openai_provider)
    assert error.kind == "stream"
    assert "ended before it was complete" in error.message


async def test_malformed_tool_arguments_fail_when_read(loop_model_server, loop_openai_provider):
    loop_model_server.script(call_tools(("read_cell", '{"cell_id": "c3"')))
    events = await collect(step(loop_openai_provider))
    (ready,) = [e for e in events if isinstance(e, ToolCallsReady)]
    with pytest.raises(BadToolArguments) as caught:
        ready.calls[0].arguments()
    assert caught.value.message.startswith(
        "The model called the tool 'read_cell' with arguments that are not a JSON object"
    )
    assert caught.value.tool_name == "read_cell"


async def test_arguments_that_are_not_an_object_are_refused():
    with pytest.raises(BadToolArguments, match="got a JSON list"):
        ToolCall("call_0", "run", '["c1"]').arguments()
    assert ToolCall("call_0", "list_cells", "").arguments() == {}


async def test_an_unreachable_server_is_reported(loop_make_openai_provider):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    error = await failure(loop_make_openai_provider(base_url=url))
    assert error.kind == "unreachable"
    assert error.message.startswith(f"Could not reach the OpenAI-compatible server at {url}")
    assert TEST_API_KEY not in error.message


async def test_openai_without_a_key_asks_for_one(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    provider = OpenAIProvider(None, None, timeout=1.0)
    try:
        error = await failure(provider)
    finally:
        await provider.aclose()
    assert error.kind == "auth"
    assert error.message == (
        "No OpenAI API key is set. Set OPENAI_API_KEY or c.JupyterLoopApp.openai_api_key."
    )


async def test_environment_variables_are_honoured(loop_model_server):
    # The settings read the environment, once; the provider gets what they found.
    settings = AgentSettings(
        environ={
            "OPENAI_API_KEY": "sk-from-environment-42",
            "OPENAI_BASE_URL": loop_model_server.openai_base_url,
        },
        request_timeout=5.0,
    )
    provider = settings.make_provider()
    assert isinstance(provider, OpenAIProvider)
    try:
        await collect(step(provider))
    finally:
        await provider.aclose()
    assert loop_model_server.requests[0].headers["authorization"] == "Bearer sk-from-environment-42"
    assert repr(provider) == (
        f"OpenAIProvider(base_url='{loop_model_server.openai_base_url}', api_key=set)"
    )


async def test_the_provider_reads_only_its_arguments_not_the_environment(monkeypatch):
    # One source for each setting: a key in the environment reaches a provider through
    # the settings (above), never behind their back.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment-42")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    provider = OpenAIProvider(None, None, timeout=1.0)
    try:
        error = await failure(provider)
    finally:
        await provider.aclose()
    assert repr(provider) == "OpenAIProvider(base_url='https://api.openai.com/v1', api_key=not set)"
    assert error.kind == "auth"


# -- pieces ---------------------------------------------------------------------------------


def test_parallel_calls_interleaved_by_index_are_kept_apart():
    calls = ToolCallAssembler()
    calls.add(index=0, call_id="a", name="read_cell", arguments='{"cell_id":')
    calls.add(index=1, call_id="b", name="run_cells", arguments='{"ids":')
    calls.add(index=0, call_id=None, name=None, arguments=' "c1"}')
    calls.add(index=1, call_id=None, name=None, arguments=' ["c2"]}')
    assert calls.result() == (
        ToolCall("a", "read_cell", '{"cell_id": "c1"}'),
        ToolCall("b", "run_cells", '{"ids": ["c2"]}'),
    )


def test_calls_sent_whole_at_the_same_index_stay_separate():
    calls = ToolCallAssembler()
    calls.add(index=0, call_id="a", name="one", arguments="{}")
    calls.add(index=0, call_id="b", name="two", arguments="{}")
    assert [(c.id, c.name) for c in calls.result()] == [("a", "one"), ("b", "two")]


def test_retry_after_is_read_in_seconds_milliseconds_or_as_a_date():
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = "Wed, 01 Jan 2025 00:00:30 GMT"
    assert parse_retry_after({"Retry-After": date}, now=1735689600.0) == 30.0
    assert parse_retry_after({}) is None
    assert RetryPolicy(max_wait=5.0).wait_for(6.0, 0) is None
    assert RetryPolicy(default_wait=1.0, max_wait=3.0).wait_for(None, 2) == 3.0


def test_credentials_are_masked_in_server_text():
    text = "key sk-proj-abcdefgh12345678 and Bearer abcdefghijklmnop and mine: hunter2-secret"
    assert redact(text, ["hunter2-secret"]) == "key *** and *** and mine: ***"


async def test_the_factory_builds_each_kind():
    loop_openai_provider = make_provider("openai", api_key="sk-x", base_url="http://127.0.0.1:9/v1")
    loop_ollama_provider = make_provider("ollama", host="http://127.0.0.1:9", num_ctx=8192)
    assert isinstance(loop_openai_provider, OpenAIProvider)
    assert isinstance(loop_ollama_provider, OllamaProvider)
    assert loop_ollama_provider.label == "Ollama at http://127.0.0.1:9"
    await loop_openai_provider.aclose()
    await loop_ollama_provider.aclose()
    with pytest.raises(BadRequest, match="Unknown model provider 'anthropic'"):
        make_provider("anthropic")
