"""Inline completions against the scripted model server: what the model is sent (the
outputs of earlier cells, secrets masked), both wire formats (OpenAI chat, Ollama
fill-in-the-middle), cancelling (the model server sees the request dropped), errors."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from agent_helpers import OLLAMA_CHAT, OPENAI_CHAT, openai_config
from completion_helpers import (
    ANSWER,
    COMPLETION,
    FAR_OUTPUT,
    INSERTED,
    lines,
    notebook_with_far_output,
    notebook_with_table,
    request,
    sent_text,
    text_of,
)
from loop_helpers import wait_for
from tornado.httpclient import HTTPClientError

from jupyter_loop.testing import ScriptedModel, fail, say

OLLAMA_GENERATE = "/api/generate"
CANARY = "hunter2-canary-7c1e9b"


@pytest.fixture
def loop_config(loop_model_server):
    return openai_config(loop_model_server, secrets=[CANARY], completion_model="scripted-plain")


async def stream(jp_fetch, body):
    response = await jp_fetch(*COMPLETION, "stream", method="POST", body=json.dumps(body))
    assert response.code == 200
    return response.body


async def test_completion_knows_the_columns_a_cell_printed(
    jp_fetch, jp_root_dir, loop_model_server
):
    path = notebook_with_table(jp_root_dir)
    # Answered only if the prompt carries the column name, which is only in the output.
    loop_model_server.script(say(ANSWER, requires="price_eur_2024"))
    loop_model_server.set_default_reply(say("unknown"))
    body = await stream(jp_fetch, request(path))
    assert text_of(body) == INSERTED  # the typed "pr" is not repeated
    assert lines(body)[-1] == {"done": True, "error": None}
    (sent,) = loop_model_server.bodies(OPENAI_CHAT)
    assert sent["model"] == "scripted-plain"
    assert "tools" not in sent
    user = sent["messages"][-1]["content"]
    assert "price_eur_2024" in user and 'df["pr<CURSOR>' in user
    assert "df.describe()" in user  # the cell below


async def test_chat_answers_in_code_fences_are_unwrapped(jp_fetch, jp_root_dir, loop_model_server):
    path = notebook_with_table(jp_root_dir)
    loop_model_server.script(say(f"```python\n{ANSWER}\n```", chunk_size=3))
    assert text_of(await stream(jp_fetch, request(path))) == INSERTED


async def test_secrets_are_masked_in_what_the_model_is_sent(
    jp_fetch, jp_root_dir, loop_model_server
):
    path = notebook_with_table(jp_root_dir, secret=f"token {CANARY}\n")
    loop_model_server.script(say(ANSWER))
    body = request(path, before=f'key = "{CANARY}"\ndf["pr')
    await stream(jp_fetch, body)
    sent = sent_text(loop_model_server.bodies(OPENAI_CHAT))
    assert "price_eur_2024" in sent
    assert CANARY not in sent


async def test_usage_is_counted_without_a_journal(jp_fetch, api, jp_root_dir, loop_model_server):
    path = notebook_with_table(jp_root_dir)
    loop_model_server.script(say(ANSWER, usage=(120, 5)), fail(500, "model crashed"))
    await stream(jp_fetch, request(path))
    failed = lines(await stream(jp_fetch, request(path)))
    assert failed[-1]["done"] is True
    assert "internal error (500)" in failed[-1]["error"]
    status = await api(*COMPLETION, "status")
    assert status["configured"] is True
    assert status["model"] == "scripted-plain"
    usage = status["usage"]
    assert (usage["requests"], usage["input_tokens"], usage["output_tokens"]) == (2, 120, 5)
    assert usage["failures"] == 1 and "model crashed" in usage["last_error"]
    journal = await api("api", "jupyter-loop", "agent", "journal", params={"path": path})
    assert journal["entries"] == []


async def test_an_aborted_request_aborts_the_model_call_and_counts_as_cancelled(
    jp_fetch, api, jp_root_dir, jp_http_port, jp_base_url, jp_auth_header, loop_model_server
):
    path = notebook_with_table(jp_root_dir)
    loop_model_server.script(say("x" * 400, chunk_size=2, delay=0.05))
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/jupyter-loop/completion/stream"
    async with httpx.AsyncClient(headers=dict(jp_auth_header), timeout=60) as client:
        async with client.stream("POST", url, json=request(path)) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                assert json.loads(line)["text"]
                break  # the user typed on: the browser aborts the fetch
    aborted = await wait_for(lambda: loop_model_server.aborted, timeout=10)
    assert [r.path for r in aborted] == [OPENAI_CHAT]
    for _ in range(100):  # counted when the cancelled call has wound down
        usage = (await api(*COMPLETION, "status"))["usage"]
        if usage["cancelled"]:
            break
        await asyncio.sleep(0.05)
    assert (usage["requests"], usage["cancelled"], usage["failures"]) == (1, 1, 0)


async def test_a_new_request_from_the_same_editor_cancels_the_previous(
    jp_fetch, api, jp_root_dir, loop_model_server
):
    path = notebook_with_table(jp_root_dir)
    loop_model_server.script(say("y" * 400, chunk_size=2, delay=0.05), say(ANSWER))
    first = asyncio.ensure_future(stream(jp_fetch, request(path)))
    await wait_for(lambda: loop_model_server.bodies(OPENAI_CHAT))
    second = await stream(jp_fetch, request(path, before='df["pri'))
    assert text_of(second) == 'ce_eur_2024"]'
    cut = await asyncio.wait_for(first, 10)
    assert len(text_of(cut)) < 400  # it ended early, without its full answer
    aborted = await wait_for(lambda: loop_model_server.aborted, timeout=10)
    assert len(aborted) == 1 and aborted[0].body["messages"][-1]["content"].count('df["pr<') == 1
    assert (await api(*COMPLETION, "status"))["usage"]["cancelled"] == 1


async def test_an_accepted_suggestion_is_answered_to_its_end_and_its_tokens_counted(
    jp_fetch, api, jp_root_dir, jp_http_port, jp_base_url, jp_auth_header, loop_model_server
):
    """The editor asks again as its person accepts a suggestion (its text changed); the
    model sends the call's token count after the text. The accepted call is not typed
    over: it ends, and its tokens count (they were lost when the person was quick)."""
    path = notebook_with_table(jp_root_dir)
    loop_model_server.script(
        say(ANSWER, chunk_size=20, delay=0.3, usage=(1234, 7)), say("", usage=(5, 0))
    )
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/jupyter-loop/completion/stream"
    async with httpx.AsyncClient(headers=dict(jp_auth_header), timeout=60) as client:
        async with client.stream("POST", url, json=request(path, sequence=1)) as response:
            answer = response.aiter_lines()
            assert json.loads(await anext(answer))["text"] == INSERTED
            accepted = request(path, before='df["pr' + INSERTED, sequence=2)
            await stream(jp_fetch, accepted)
            rest = [json.loads(line) async for line in answer]
    assert rest == [{"done": True, "error": None}]
    usage = (await api(*COMPLETION, "status"))["usage"]
    assert (usage["requests"], usage["cancelled"], usage["input_tokens"]) == (2, 0, 1234 + 5)


async def test_two_requests_at_once_from_one_editor_make_one_model_call(
    jp_fetch, jp_root_dir, loop_model_server
):
    path = notebook_with_table(jp_root_dir)  # not loaded yet: the first prompt takes a while
    loop_model_server.set_default_reply(say(ANSWER, delay=0.05))
    # Two connections: the server may get them in either order; the numbers tell.
    answers = await asyncio.gather(
        stream(jp_fetch, request(path, sequence=1)),
        stream(jp_fetch, request(path, before='df["pri', sequence=2)),
    )
    assert sorted(text_of(answer) for answer in answers) == ["", 'ce_eur_2024"]']
    answered = len(loop_model_server.bodies(OPENAI_CHAT)) - len(loop_model_server.aborted)
    assert answered == 1


async def test_an_older_request_arriving_late_leaves_the_newer_one_alone(
    jp_fetch, jp_root_dir, loop_model_server
):
    """The browser sends a request per keystroke; over several connections an earlier
    keystroke's request can reach the server after a later one's."""
    path = notebook_with_table(jp_root_dir)
    loop_model_server.set_default_reply(say(ANSWER, chunk_size=2, delay=0.05))
    newer = asyncio.ensure_future(stream(jp_fetch, request(path, before='df["pri', sequence=8)))
    await wait_for(lambda: loop_model_server.bodies(OPENAI_CHAT))
    older = await stream(jp_fetch, request(path, sequence=7))
    assert text_of(older) == ""
    assert text_of(await asyncio.wait_for(newer, 10)) == 'ce_eur_2024"]'
    assert len(loop_model_server.bodies(OPENAI_CHAT)) == 1 and loop_model_server.aborted == []


async def test_outputs_of_cells_in_view_reach_the_prompt(jp_fetch, jp_root_dir, loop_model_server):
    path = notebook_with_far_output(jp_root_dir)
    loop_model_server.set_default_reply(say('"data/sales_q3_2024.parquet")'))
    body = request(path, before="pd.read_parquet(")
    await stream(jp_fetch, body)  # the browser did not say what is in view: neighbours only
    on_screen = ["f0", "f5", "f6", "f7", "f8", "f9", "c1"]
    await stream(jp_fetch, {**body, "visible_cell_ids": on_screen, "editor_id": "tab-1:c1b"})
    without, with_view = (
        b["messages"][-1]["content"] for b in loop_model_server.bodies(OPENAI_CHAT)
    )
    assert FAR_OUTPUT.strip() not in without
    assert "x9 = 9" in without and "x4 = 4" in without  # the six cells above
    assert FAR_OUTPUT.strip() in with_view
    assert "Outputs of other cells in view" in with_view and "In [1]: save(sales)" in with_view


@pytest.mark.parametrize(
    ("body", "words", "code"),
    [
        ({"cell_id": "c1", "editor_id": "e"}, "'path'", 400),
        ({"path": "prices.ipynb", "editor_id": "e"}, "'cell_id'", 400),
        ({"path": "prices.ipynb", "cell_id": "c1"}, "'editor_id'", 400),
        (request(before=3), "'before'", 400),
        (request(visible_cell_ids="c0"), "'visible_cell_ids'", 400),
        (request(visible_cell_ids=["c0", 7]), "'visible_cell_ids'", 400),
        (request(sequence="2"), "'sequence'", 400),
        (request(sequence=-1), "'sequence'", 400),
        (request(path="../x.ipynb"), "not a path", 400),
        (request(path="missing.ipynb"), "No notebook", 404),
        (request(cell_id="nope"), "No cell with id", 404),
    ],
)
async def test_bad_requests_get_a_4xx_with_a_message(
    jp_fetch, jp_root_dir, loop_model_server, body, words, code
):
    notebook_with_table(jp_root_dir)
    with pytest.raises(HTTPClientError) as caught:
        await stream(jp_fetch, body)
    assert caught.value.code == code
    assert words in json.loads(caught.value.response.body)["message"]
    assert loop_model_server.requests == []


class TestOllama:
    @pytest.fixture
    def loop_config(self, loop_model_server):
        loop_model_server.set_models(
            ScriptedModel("scripted-coder", capabilities=("completion", "insert")),
            ScriptedModel("scripted-chat", capabilities=("completion", "tools")),
        )
        return {
            "agent_provider": "ollama",
            "ollama_host": loop_model_server.ollama_host,
            "completion_model": "scripted-coder",
            "secrets": [CANARY],
        }

    async def test_fill_in_the_middle_with_a_suffix(self, jp_fetch, jp_root_dir, loop_model_server):
        path = notebook_with_table(jp_root_dir)
        loop_model_server.script(say(INSERTED, requires="price_eur_2024"))
        loop_model_server.set_default_reply(say("unknown"))
        body = request(path, before='total = df["pr', after=f"].sum()  # {CANARY}")
        assert text_of(await stream(jp_fetch, body)) == INSERTED
        (sent,) = loop_model_server.bodies(OLLAMA_GENERATE)
        assert sent["model"] == "scripted-coder"
        assert sent["prompt"].endswith('total = df["pr')
        assert "price_eur_2024" in sent["prompt"]
        assert sent["suffix"].startswith("].sum()")
        assert CANARY not in sent_text([sent])
        assert loop_model_server.bodies(OLLAMA_CHAT) == []

    async def test_an_aborted_request_aborts_generation(
        self, jp_fetch, jp_root_dir, jp_http_port, jp_base_url, jp_auth_header, loop_model_server
    ):
        path = notebook_with_table(jp_root_dir)
        loop_model_server.script(say("z" * 400, chunk_size=2, delay=0.05))
        url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/jupyter-loop/completion/stream"
        async with httpx.AsyncClient(headers=dict(jp_auth_header), timeout=60) as client:
            async with client.stream("POST", url, json=request(path)) as response:
                async for _ in response.aiter_lines():
                    break
        aborted = await wait_for(lambda: loop_model_server.aborted, timeout=10)
        assert [r.path for r in aborted] == [OLLAMA_GENERATE]

    async def test_a_missing_model_says_so(self, jp_fetch, jp_root_dir, loop_model_server):
        path = notebook_with_table(jp_root_dir)
        loop_model_server.script(fail(404, "model 'scripted-coder' not found"))
        last = lines(await stream(jp_fetch, request(path)))[-1]
        assert "does not have the model 'scripted-coder'" in last["error"]

    async def test_a_model_that_cannot_fill_in_the_middle_gets_a_chat_prompt(
        self, jp_fetch, api, jp_root_dir, loop_model_server
    ):
        path = notebook_with_table(jp_root_dir)
        loop_model_server.set_default_reply(say(ANSWER))
        for _ in range(2):
            body = request(path, after="\nprint(total)", model="scripted-chat")
            assert text_of(await stream(jp_fetch, body)) == INSERTED
        # Refused once (400 "does not support insert"), then asked by chat only.
        assert [r.path for r in loop_model_server.requests] == [
            OLLAMA_GENERATE,
            OLLAMA_CHAT,
            OLLAMA_CHAT,
        ]
        assert (
            "price_eur_2024" in loop_model_server.bodies(OLLAMA_CHAT)[0]["messages"][-1]["content"]
        )
        assert (await api(*COMPLETION, "status"))["usage"]["failures"] == 0


class TestOllamaListedModel:
    """No model configured: completions use the first model Ollama lists (by name)."""

    @pytest.fixture
    def loop_config(self, loop_model_server, monkeypatch):
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        loop_model_server.set_models(
            ScriptedModel("scripted-coder-1", capabilities=("completion", "insert")),
            ScriptedModel("scripted-coder-2", capabilities=("completion", "insert")),
        )
        return {"agent_provider": "ollama", "ollama_host": loop_model_server.ollama_host}

    async def test_a_model_removed_from_the_server_is_replaced_by_one_it_lists(
        self, jp_fetch, api, jp_root_dir, loop_model_server
    ):
        path = notebook_with_table(jp_root_dir)
        loop_model_server.set_default_reply(say(INSERTED))
        assert text_of(await stream(jp_fetch, request(path))) == INSERTED
        # `ollama rm scripted-coder-1`: it leaves the list, and asking for it is a 404.
        loop_model_server.set_models(
            ScriptedModel("scripted-coder-2", capabilities=("completion", "insert"))
        )
        loop_model_server.script(fail(404, "model 'scripted-coder-1' not found"))
        answered = lines(await stream(jp_fetch, request(path)))
        assert answered[-1] == {"done": True, "error": None}
        assert "".join(line.get("text", "") for line in answered[:-1]) == INSERTED
        asked = [body["model"] for body in loop_model_server.bodies(OLLAMA_GENERATE)]
        assert asked == ["scripted-coder-1", "scripted-coder-1", "scripted-coder-2"]
        status = await api(*COMPLETION, "status")
        assert status["model"] == "scripted-coder-2"
        assert status["usage"]["failures"] == 0
        # From now on the new model is asked at once.
        await stream(jp_fetch, request(path))
        assert loop_model_server.bodies(OLLAMA_GENERATE)[-1]["model"] == "scripted-coder-2"
        assert len(loop_model_server.bodies(OLLAMA_GENERATE)) == 4

    async def test_a_404_for_a_model_still_listed_is_reported(
        self, jp_fetch, jp_root_dir, loop_model_server
    ):
        path = notebook_with_table(jp_root_dir)
        loop_model_server.script(fail(404, "model 'scripted-coder-1' not found"))
        last = lines(await stream(jp_fetch, request(path)))[-1]
        assert "does not have the model 'scripted-coder-1'" in last["error"]
        asked = [body["model"] for body in loop_model_server.bodies(OLLAMA_GENERATE)]
        assert asked == ["scripted-coder-1"]


class TestNoProvider:
    @pytest.fixture
    def loop_config(self, monkeypatch):
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST"):
            monkeypatch.delenv(name, raising=False)
        return {}

    async def test_quietly_answers_nothing(self, jp_fetch, api, jp_root_dir):
        path = notebook_with_table(jp_root_dir)
        assert lines(await stream(jp_fetch, request(path))) == [{"done": True, "error": None}]
        status = await api(*COMPLETION, "status")
        assert status["configured"] is False
        assert "OPENAI_API_KEY" in status["hint"] and "Inline completions" in status["hint"]
        assert status["usage"]["requests"] == 0 and status["usage"]["failures"] == 0


async def test_completion_knows_the_columns_of_a_dataframe_never_printed(
    jp_fetch, api, jp_root_dir, loop_model_server, start_kernel, run_cells, read_notebook
):
    path = notebook_with_table(jp_root_dir)
    await start_kernel(path)
    # The column exists only in the kernel: no cell prints it or names it in its source.
    nb = read_notebook(path)
    nb.cells[0].source = "import pandas as pd\ndf = pd.DataFrame({'qty_' + 'sold_q3': [1]})"
    nb.cells[0].outputs = []
    (jp_root_dir / path).write_text(json.dumps(nb), encoding="utf-8")
    await run_cells(path, "c0")
    await wait_for(lambda: (saved := read_notebook(path)) and saved.cells[0].execution_count)
    for _ in range(100):  # the run's end is written; then the queue is idle
        if not (await api("api", "jupyter-loop", "runs", params={"path": path}))["cells"]:
            break
        await asyncio.sleep(0.05)
    loop_model_server.script(say('qty_sold_q3"]', requires="qty_sold_q3"))
    loop_model_server.set_default_reply(say("unknown"))
    body = await stream(jp_fetch, request(path, before='df["q'))
    assert text_of(body) == 'ty_sold_q3"]'
    assert "qty_sold_q3" in sent_text(loop_model_server.bodies(OPENAI_CHAT))
