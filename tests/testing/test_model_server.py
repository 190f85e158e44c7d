"""The scripted model server, seen through plain HTTP: what real clients will read."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest

from jupyter_loop.testing import (
    Reply,
    ScriptedCall,
    ScriptedModel,
    ScriptedModelServer,
    call_tools,
    fail,
    rate_limited,
    say,
)


def sse_events(response: httpx.Response) -> list[Any]:
    """The ``data:`` payloads of an SSE body, JSON-decoded except ``[DONE]``."""
    events: list[Any] = []
    for line in response.text.splitlines():
        if line.startswith("data: "):
            data = line[len("data: ") :]
            events.append(data if data == "[DONE]" else json.loads(data))
    return events


def openai_chat(server: ScriptedModelServer, **body: Any) -> httpx.Response:
    payload = {"model": "scripted-tools", "messages": [{"role": "user", "content": "hi"}], **body}
    return httpx.post(f"{server.openai_base_url}/chat/completions", json=payload, timeout=5)


def ollama_chat(server: ScriptedModelServer, **body: Any) -> httpx.Response:
    payload = {"model": "scripted-tools", "messages": [{"role": "user", "content": "hi"}], **body}
    return httpx.post(f"{server.ollama_host}/api/chat", json=payload, timeout=5)


def deltas(events: list[Any]) -> list[dict[str, Any]]:
    return [e["choices"][0]["delta"] for e in events if e != "[DONE]" and e["choices"]]


# -- OpenAI ---------------------------------------------------------------------------------


def test_openai_stream_splits_text_into_chunks_and_ends_with_done(loop_model_server):
    loop_model_server.script(say("Hello, wörld", chunk_size=5))
    response = openai_chat(loop_model_server, stream=True)
    assert response.headers["content-type"] == "text/event-stream"
    events = sse_events(response)
    assert events[-1] == "[DONE]"
    pieces = [d["content"] for d in deltas(events) if d.get("content")]
    assert pieces == ["Hello", ", wör", "ld"]
    assert events[-2]["choices"][0]["finish_reason"] == "stop"


def test_openai_stream_sends_usage_last_only_when_asked(loop_model_server):
    loop_model_server.script(say("hi", usage=(12, 3)), say("hi", usage=(12, 3)))
    asked = sse_events(
        openai_chat(loop_model_server, stream=True, stream_options={"include_usage": True})
    )
    assert asked[-2]["choices"] == []
    assert asked[-2]["usage"] == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    plain = sse_events(openai_chat(loop_model_server, stream=True))
    assert all("usage" not in e for e in plain if e != "[DONE]")


def test_openai_tool_call_name_first_then_arguments_in_pieces(loop_model_server):
    loop_model_server.script(
        call_tools(("read_cell", {"cell_id": "c1"}), ("run_cells", {"ids": ["c2"]}), chunk_size=6)
    )
    calls = [
        d["tool_calls"][0]
        for d in deltas(sse_events(openai_chat(loop_model_server, stream=True)))
        if d.get("tool_calls")
    ]
    first = [c for c in calls if c["index"] == 0]
    assert first[0]["function"] == {"name": "read_cell", "arguments": ""}
    assert first[0]["id"].startswith("call_")
    assert all("name" not in c["function"] for c in first[1:])
    assert len(first) > 2
    assert "".join(c["function"]["arguments"] for c in first) == '{"cell_id": "c1"}'
    second = "".join(c["function"]["arguments"] for c in calls if c["index"] == 1)
    assert json.loads(second) == {"ids": ["c2"]}


def test_openai_json_answer_when_not_streaming(loop_model_server):
    loop_model_server.script(call_tools(ScriptedCall("run", {"a": 1}, id="call_x"), text="Sure."))
    body = openai_chat(loop_model_server).json()
    message = body["choices"][0]["message"]
    assert message["content"] == "Sure."
    assert message["tool_calls"][0]["id"] == "call_x"
    assert message["tool_calls"][0]["function"] == {"name": "run", "arguments": '{"a": 1}'}
    assert body["choices"][0]["finish_reason"] == "tool_calls"


def test_openai_errors_use_the_openai_error_shape_and_headers(loop_model_server):
    loop_model_server.script(rate_limited(retry_after=7))
    response = openai_chat(loop_model_server, stream=True)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.json()["error"]["message"].startswith("Rate limit reached")


def test_models_are_listed_for_openai(loop_model_server):
    response = httpx.get(f"{loop_model_server.openai_base_url}/models", timeout=5)
    assert [m["id"] for m in response.json()["data"]] == [
        "scripted-tools",
        "scripted-vision",
        "scripted-plain",
    ]


# -- Ollama ---------------------------------------------------------------------------------


def test_ollama_streams_ndjson_with_object_arguments_and_no_ids(loop_model_server):
    loop_model_server.script(
        call_tools(("run_cells", {"ids": ["c1"]}), text="On it", usage=(20, 4))
    )
    response = ollama_chat(loop_model_server)
    parts = [json.loads(line) for line in response.text.splitlines()]
    assert "".join(p["message"]["content"] for p in parts) == "On it"
    calls = [c for p in parts for c in p["message"].get("tool_calls", [])]
    assert calls == [{"function": {"name": "run_cells", "arguments": {"ids": ["c1"]}}}]
    assert [p["done"] for p in parts][-2:] == [False, True]
    assert (parts[-1]["prompt_eval_count"], parts[-1]["eval_count"]) == (20, 4)


def test_ollama_json_answer_when_not_streaming(loop_model_server):
    loop_model_server.script(say("Whole answer"))
    body = ollama_chat(loop_model_server, stream=False).json()
    assert body["message"] == {"role": "assistant", "content": "Whole answer"}
    assert body["done"] is True


def test_ollama_tags_and_show_describe_the_models(loop_model_server):
    tags = httpx.get(f"{loop_model_server.ollama_host}/api/tags", timeout=5).json()
    assert [m["name"] for m in tags["models"]][:2] == ["scripted-tools", "scripted-vision"]
    shown = httpx.post(
        f"{loop_model_server.ollama_host}/api/show", json={"model": "scripted-vision"}, timeout=5
    ).json()
    assert shown["capabilities"] == ["completion", "tools", "vision"]
    assert shown["model_info"]["llama.context_length"] == 32768
    missing = httpx.post(
        f"{loop_model_server.ollama_host}/api/show", json={"model": "nope"}, timeout=5
    )
    assert missing.status_code == 404
    assert missing.json() == {"error": "model 'nope' not found"}


def test_older_ollama_models_have_no_capabilities_list(loop_model_server):
    loop_model_server.set_models(ScriptedModel("old", capabilities=None, template="{{ .Tools }}"))
    shown = httpx.post(
        f"{loop_model_server.ollama_host}/api/show", json={"model": "old"}, timeout=5
    )
    assert "capabilities" not in shown.json()
    assert shown.json()["template"] == "{{ .Tools }}"


def test_a_model_without_tools_refuses_a_request_with_tools(loop_model_server):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    response = ollama_chat(loop_model_server, model="scripted-plain", tools=tools)
    assert response.status_code == 400
    assert response.json()["error"].endswith("scripted-plain does not support tools")
    assert ollama_chat(loop_model_server, model="scripted-plain").status_code == 200


# -- scripting ------------------------------------------------------------------------------


def test_replies_are_used_in_order_then_the_default(loop_model_server):
    loop_model_server.script(say("first"), say("second"))
    answers = [
        ollama_chat(loop_model_server, stream=False).json()["message"]["content"] for _ in "abc"
    ]
    assert answers == ["first", "second", "ok"]
    loop_model_server.set_default_reply(say("fallback"))
    assert ollama_chat(loop_model_server, stream=False).json()["message"]["content"] == "fallback"


def test_replies_for_other_endpoints_wait_for_their_endpoint(loop_model_server):
    loop_model_server.script(fail(401, "bad key", endpoint="models"), say("chat answer"))
    assert (
        ollama_chat(loop_model_server, stream=False).json()["message"]["content"] == "chat answer"
    )
    assert httpx.get(f"{loop_model_server.ollama_host}/api/tags", timeout=5).status_code == 401
    assert httpx.get(f"{loop_model_server.ollama_host}/api/tags", timeout=5).status_code == 200


def test_requests_are_recorded_with_path_body_and_headers(loop_model_server):
    openai_chat(loop_model_server, stream=True)
    httpx.get(f"{loop_model_server.ollama_host}/api/tags", headers={"X-Probe": "1"}, timeout=5)
    first, second = loop_model_server.requests
    assert (first.method, first.path) == ("POST", "/v1/chat/completions")
    assert first.body["messages"] == [{"role": "user", "content": "hi"}]
    assert (second.path, second.body, second.headers["x-probe"]) == ("/api/tags", None, "1")
    loop_model_server.reset()
    assert loop_model_server.requests == []


def test_when_the_first_text_went_out_is_recorded(loop_model_server):
    delay = 0.1
    loop_model_server.script(say("abc", delay=delay), say("abc", delay=delay))
    began = time.time()
    openai_chat(loop_model_server, stream=True)  # role, text, finish, [DONE]: a delay before each
    middle = time.time()
    ollama_chat(loop_model_server)  # text, done
    end = time.time()
    (openai, sent_openai), (ollama, sent_ollama) = loop_model_server.first_text
    assert (openai.path, ollama.path) == ("/v1/chat/completions", "/api/chat")
    assert began + 2 * delay <= sent_openai <= middle - 2 * delay
    assert middle + delay <= sent_ollama <= end - delay
    loop_model_server.reset()
    assert loop_model_server.first_text == []


def test_a_cut_stream_closes_the_connection_midway(loop_model_server):
    loop_model_server.script(say("a long answer that never ends", chunk_size=2, cut_after=3))
    with pytest.raises(httpx.RemoteProtocolError):
        openai_chat(loop_model_server, stream=True)
    loop_model_server.script(say("whole"))
    assert openai_chat(loop_model_server, stream=True).status_code == 200


def test_control_endpoints_script_list_and_reset_over_http(loop_model_server):
    url = loop_model_server.url
    queued = httpx.post(f"{url}/_script", json=[{"text": "scripted over HTTP"}], timeout=5)
    assert queued.json() == {"queued": 1}
    assert ollama_chat(loop_model_server, stream=False).json()["message"]["content"] == (
        "scripted over HTTP"
    )
    recorded = httpx.get(f"{url}/_requests", timeout=5).json()
    assert [(r["method"], r["path"]) for r in recorded] == [("POST", "/api/chat")]
    httpx.post(f"{url}/_reset", timeout=5)
    assert httpx.get(f"{url}/_requests", timeout=5).json() == []


def test_a_bad_script_is_refused_with_the_reason(loop_model_server):
    response = httpx.post(f"{loop_model_server.url}/_script", json=[{"txt": "typo"}], timeout=5)
    assert response.status_code == 400
    assert response.json() == {"error": "Bad reply: Unknown reply keys: txt"}
    assert loop_model_server.pending == 0


def test_replies_round_trip_through_json():
    reply = call_tools(("f", '{"broken'), text="x", usage=(1, 2), delay=0.1, cut_after=4)
    assert Reply.from_json(json.loads(json.dumps(reply.to_json()))) == reply


def test_stop_frees_the_port():
    server = ScriptedModelServer().start()
    port = server.port
    server.stop()
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", port))


def test_command_line_prints_the_port_and_serves():
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_loop.testing.model_server", "--port", "0", "--print-port"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        models = httpx.get(f"http://127.0.0.1:{port}/api/tags", timeout=5).json()
        assert models["models"][0]["name"] == "scripted-tools"
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        if process.stdout is not None:
            process.stdout.close()
