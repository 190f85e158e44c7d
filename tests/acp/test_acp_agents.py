"""ACP agents hosted by the server: a scripted agent (``jupyter_loop.testing.acp_agent``,
written with the ACP SDK) runs as a real process, through a real Jupyter server, its
MCP calls through the real endpoint with the token its session was given."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from agent_helpers import (
    Agent,
    agent_state,
    approval_in,
    is_running,
    notices,
    refused,
    said,
    tab_proposals,
)
from authorizers import both
from loop_helpers import wait_for

SCRIPTED = {"command": [sys.executable, "-m", "jupyter_loop.testing.acp_agent"]}
CANARY = "canary-acp-7f3a9e21c4"


def config(**extra: Any) -> dict[str, Any]:
    return {
        "acp_agents": {
            "scripted": SCRIPTED,
            "missing": {"command": ["no-such-acp-agent-here"], "env": {"SECRET": "s3cr3t"}},
            "broken": {"command": "scripted --acp"},
            "forbidden": SCRIPTED,
            # Outlives its closed input (as codex-acp 0.16.0 does): its shell goes on.
            "stubborn": {
                "command": [
                    "sh",
                    "-c",
                    f"{sys.executable} -m jupyter_loop.testing.acp_agent; sleep 600",
                ]
            },
        },
        "allowed_agents": ["scripted", "missing", "broken", "stubborn"],
        "acp_presets": False,
        "batch_interval": 0.01,
        "secrets": [CANARY],
        **extra,
    }


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return config()


async def test_agents_are_listed_without_their_commands(api: Any) -> None:
    reply = await api("api", "jupyter-loop", "agents")
    agents = {a["name"]: a for a in reply["agents"]}
    assert list(agents) == ["builtin", "scripted", "missing", "broken", "forbidden", "stubborn"]
    assert agents["builtin"]["kind"] == "builtin"
    assert agents["scripted"] == {
        "name": "scripted", "kind": "acp", "label": "scripted", "available": True,
        "why_not": None,
    }  # fmt: skip
    assert "not found" in agents["missing"]["why_not"]
    assert "'command' must be a non-empty list" in agents["broken"]["why_not"]
    assert "allowed_agents" in agents["forbidden"]["why_not"]
    assert "s3cr3t" not in json.dumps(reply)  # the environment stays on the server
    assert "-m" not in json.dumps(reply)  # and so do the arguments


async def test_an_agent_that_cannot_start_is_refused_plainly(
    agent: Agent, write_notebook: Any
) -> None:
    path = write_notebook("refused.ipynb", "1")
    assert "not allowed" in await refused(agent.start(path, "hi", agent="forbidden"), 403)
    assert "cannot start" in await refused(agent.start(path, "hi", agent="missing"), 503)
    assert "No agent named" in await refused(agent.start(path, "hi", agent="nobody"), 404)
    assert "'agent'" in await refused(agent.start(path, "hi", agent="../x"), 400)


async def test_a_turn_streams_into_the_shared_document(
    agent: Agent, notebook_in_tab: Any, http_server_client: Any
) -> None:
    async with notebook_in_tab("stream.ipynb", "x = 1") as (path, tab):
        await agent.start(
            path, "say Hello from an ACP agent\ntool looked around\nsay Done.", agent="scripted"
        )
        conversation = await agent.ended(path)
        state = await wait_for(
            lambda: agent_state(tab) if agent_state(tab)["turn"]["state"] == "done" else None
        )
    live = [(e["kind"], e.get("text") or e.get("summary")) for e in state["live"]]
    assert live[0][0] == "user"
    assert live[1:] == [
        ("assistant", "Hello from an ACP agent"),
        ("tool", "looked around"),
        ("assistant", "Done."),
    ]
    assert state["turn"]["provider"] == "acp:scripted"
    assert conversation["turn"]["state"] == "done"
    assert said(conversation) == "Hello from an ACP agent\nDone."


async def test_the_agent_reads_a_cell_error_through_our_mcp_endpoint_and_the_live_notebook(
    agent: Agent, notebook_in_tab: Any, run_cells: Any, api: Any, http_server_client: Any
) -> None:
    async with notebook_in_tab("error.ipynb", "1 / 0") as (path, tab):
        await run_cells(path, "c0")
        await wait_for(lambda: "ZeroDivisionError" in json.dumps(tab.notebook.ycells[0].to_py()))
        script = (
            f"mcp read_cell {json.dumps({'path': path, 'cell_id': 'c0'})}\n"
            f"read {path}\ncapabilities"
        )
        await agent.start(path, script, agent="scripted")
        conversation = await agent.ended(path)
    text = said(conversation)
    assert "ZeroDivisionError" in text and not text.startswith("error")
    assert "notebook-data" in text  # the live notebook as the tools show it, not its JSON
    assert '{"read": true, "terminal": true, "write": true}' in text  # all rights: offered
    tokens = await api("api", "jupyter-loop", "tokens")
    assert [t["scope"] for t in tokens["tokens"]] == ["run"]  # the session's, until it ends


async def test_writing_the_notebook_file_becomes_a_proposal(
    agent: Agent, notebook_in_tab: Any, jp_root_dir: Any
) -> None:
    async with notebook_in_tab("write.ipynb", "1 / 0", "print('ok')") as (path, tab):
        before = (jp_root_dir / path).read_text()
        await agent.start(path, f"edit {path} 0 1 / 1", agent="scripted")
        conversation = await agent.ended(path)
        proposals = await wait_for(lambda: list(tab_proposals(tab).values()))
    assert "wrote write.ipynb" in said(conversation)
    assert [(p["kind"], p["cell_id"], p["new_source"], p["status"]) for p in proposals] == [
        ("modify", "c0", "1 / 1", "pending")
    ]
    assert (jp_root_dir / path).read_text().count("1 / 0") == before.count("1 / 0")


async def test_a_plain_file_outside_the_root_is_refused(
    agent: Agent, notebook_in_tab: Any, tmp_path: Any
) -> None:
    async with notebook_in_tab("outside.ipynb", "1") as (path, _tab):
        await agent.start(path, "read ../../outside.txt\nwrite notes.txt hello", agent="scripted")
        conversation = await agent.ended(path)
    text = said(conversation)
    assert "outside the server's root" in text
    assert "wrote notes.txt" in text


async def test_a_permission_request_becomes_an_approval_card(
    agent: Agent, notebook_in_tab: Any, api: Any
) -> None:
    async with notebook_in_tab("permission.ipynb", "1") as (path, tab):
        await agent.start(path, "permission rm -rf build\npermission push", agent="scripted")
        first = await approval_in(tab)
        assert "rm -rf build" in json.dumps(first["sources"])
        # The terminal's list (`jupyter loop status`) says who asks and what, as the card.
        waiting = (await api("api", "jupyter-loop", "status"))["approvals"]
        who = agent_state(tab)["turn"]["started_by"]
        options = "Options: Always allow, Allow, Always reject, Reject"
        assert [(w["cell_ids"], w["asked_by"], w["asks"]) for w in waiting] == [
            ([], f"scripted for {who}", [f"scripted asks to: rm -rf build\n{options}"])
        ]
        await agent.approve(path, first["id"], "once")
        second = await wait_for(
            lambda: (
                (agent_state(tab).get("approval") or {}).get("id") not in (None, first["id"])
                and agent_state(tab)["approval"]
            )
        )
        await agent.approve(path, second["id"], "deny")
        conversation = await agent.ended(path)
    assert "permission: yes" in said(conversation) and "permission: no" in said(conversation)
    assert conversation["turn"]["state"] == "done"


async def test_stop_cancels_the_turn_and_the_session_goes_on(
    agent: Agent, notebook_in_tab: Any
) -> None:
    async with notebook_in_tab("cancel.ipynb", "1") as (path, tab):
        turn_id = await agent.start(path, "pid\nhang", agent="scripted")
        shown = await wait_for(lambda: re.search(r"pid (\d+)", json.dumps(agent_state(tab))))
        first = shown.group(1)
        await agent.stop(path, turn_id)
        stopped = await agent.ended(path)
        await agent.start(path, "pid", agent="scripted")
        again = await agent.ended(path)
    assert stopped["turn"]["state"] == "stopped"
    assert any("Stopped by" in n for n in notices(stopped))
    pids = re.findall(r"pid (\d+)", said(again))
    assert again["turn"]["state"] == "done" and pids[0] == pids[-1] == first


async def test_a_crashed_agent_ends_the_turn_plainly_and_its_token_goes(
    agent: Agent, notebook_in_tab: Any, api: Any
) -> None:
    async with notebook_in_tab("crash.ipynb", "1") as (path, _tab):
        await agent.start(path, "pid\ncrash", agent="scripted")
        conversation = await agent.ended(path)
    pid = int(re.findall(r"pid (\d+)", said(conversation))[0])
    turn = conversation["turn"]
    assert turn["state"] == "error"
    assert turn["error"] == (
        'scripted exited with status 3. Its last words: "Error: the scripted agent broke".'
    )
    assert notices(conversation)[-1] == turn["error"]
    assert not is_running(pid)
    assert (await api("api", "jupyter-loop", "tokens"))["tokens"] == []


async def test_every_process_ends_with_its_session(
    agent: Agent, notebook_in_tab: Any, jp_serverapp: Any, api: Any
) -> None:
    async with notebook_in_tab("ends.ipynb", "1") as (path, _tab):
        await agent.start(path, "pid", agent="scripted")
        conversation = await agent.ended(path)
    pid = int(re.findall(r"pid (\d+)", said(conversation))[0])
    service = jp_serverapp.web_app.settings["jupyter_loop_acp"]
    assert service.processes() == [pid] and is_running(pid)
    await service.stop()  # what stop_extension awaits
    assert service.processes() == [] and not is_running(pid)
    assert (await api("api", "jupyter-loop", "tokens"))["tokens"] == []


@pytest.mark.parametrize("authorizer", both("ReadOnly"))
async def test_a_reader_sees_the_agents_but_may_not_start_one(
    agent: Agent, api: Any, write_notebook: Any
) -> None:
    path = write_notebook("reader.ipynb", "1")
    listed = await api("api", "jupyter-loop", "agents")
    assert [a["name"] for a in listed["agents"]][:2] == ["builtin", "scripted"]
    message = await refused(agent.start(path, "pid", agent="scripted"), 403)
    assert "kernels:execute and contents:write" in message


@pytest.mark.parametrize("authorizer", both("NoKernels"))
async def test_listing_the_agents_needs_the_right_to_see_kernels(api: Any) -> None:
    await refused(api("api", "jupyter-loop", "agents"), 403)


async def test_what_the_agent_is_sent_or_reads_is_masked(
    agent: Agent, notebook_in_tab: Any, run_cells: Any, jp_root_dir: Any
) -> None:
    (jp_root_dir / "notes.txt").write_text(f"one\nkey {CANARY}\nthree\n", encoding="utf-8")
    async with notebook_in_tab("masked.ipynb", f"print('{CANARY}')") as (path, tab):
        await run_cells(path, "c0")
        await wait_for(lambda: "print" in json.dumps(tab.notebook.ycells[0].to_py()))
        script = f"say {CANARY}\nread notes.txt\nread {path}"
        await agent.start(path, script, agent="scripted")
        conversation = await agent.ended(path)
    text = said(conversation)
    assert CANARY not in text and CANARY not in json.dumps(conversation)
    assert "key " in text and "three" in text and "masked.ipynb" in text


# A key given to the agent alone (not one of the server's secrets nor its environment),
# short of any well-known token shape: masked by its variable's name, as the server's are.
AGENT_KEY = "key-only-the-agent-has-91c2"
WITH_KEY = {"scripted": {**SCRIPTED, "env": {"SERVICE_API_KEY": AGENT_KEY, "LABEL": "plain"}}}


@pytest.mark.parametrize("loop_config", [config(acp_agents=WITH_KEY)])
async def test_a_key_in_an_agents_own_environment_is_masked_too(
    agent: Agent, notebook_in_tab: Any
) -> None:
    async with notebook_in_tab("agentkey.ipynb", "1") as (path, _tab):
        script = "say my key ${SERVICE_API_KEY}, my label ${LABEL}\nfail refused ${SERVICE_API_KEY}"
        await agent.start(path, script, agent="scripted")
        conversation = await agent.ended(path)
    assert AGENT_KEY not in json.dumps(conversation)
    assert said(conversation) == "my key ••••••, my label plain"
    assert conversation["turn"]["error"] == "scripted answered with an error: refused ••••••"


async def test_the_turn_goes_on_with_every_tab_closed(
    agent: Agent, write_notebook: Any, open_tab: Any
) -> None:
    path = write_notebook("closed.ipynb", "1")
    async with open_tab(path) as tab:
        await wait_for(lambda: tab.notebook.cell_number)
        await agent.start(path, "permission deploy\nsay finished alone", agent="scripted")
        approval = await approval_in(tab)
    await agent.approve(path, approval["id"], "once")  # from the terminal, say
    conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "done"
    assert "permission: yes" in said(conversation) and "finished alone" in said(conversation)
    async with open_tab(path) as back:  # a tab opened later shows the finished turn
        state = await wait_for(lambda: agent_state(back).get("turn"))
        assert state["state"] == "done"
        assert "finished alone" in json.dumps(agent_state(back)["live"])


@pytest.mark.parametrize("loop_config", [config(acp_turn_timeout=1.0)])
async def test_a_turn_over_its_time_is_cancelled_plainly(
    agent: Agent, notebook_in_tab: Any
) -> None:
    async with notebook_in_tab("slow.ipynb", "1") as (path, _tab):
        await agent.start(path, "hang", agent="scripted")
        conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "error"
    assert "took longer than 1 s" in conversation["turn"]["error"]


async def test_a_new_conversation_starts_a_new_session_and_ends_the_old_process(
    agent: Agent, notebook_in_tab: Any, api: Any
) -> None:
    async with notebook_in_tab("fresh.ipynb", "1") as (path, _tab):
        await agent.start(path, "pid", agent="scripted")
        first = int(re.findall(r"pid (\d+)", said(await agent.ended(path)))[0])
        await api(
            "api", "jupyter-loop", "agent", "conversations", method="POST", body={"path": path}
        )
        await agent.start(path, "pid", agent="scripted")
        second = int(re.findall(r"pid (\d+)", said(await agent.ended(path)))[0])
    assert first != second  # the agent remembers nothing of the conversation before
    assert not is_running(first) and is_running(second)


SECRET_WORDS = {"scripted": {**SCRIPTED, "env": {"SCRIPTED_LAST_WORDS": f"broke on {CANARY}"}}}
# A last line longer than the words kept, with a secret across where they are cut.
LONG_WORDS = {"scripted": {**SCRIPTED, "env": {"SCRIPTED_LAST_WORDS": "x" * 280 + " " + CANARY}}}


# One line longer than the stderr kept (its last 4,000 bytes), whose start falls in the
# secret: the line is kept from the middle of the secret on.
TAIL_WORDS = {
    "scripted": {
        **SCRIPTED,
        "env": {"SCRIPTED_LAST_WORDS": CANARY + "y" * 3990, "SCRIPTED_NO_BACKTRACE": "1"},
    }
}


@pytest.mark.parametrize(
    ("loop_config", "shown"),
    [
        (config(acp_agents=SECRET_WORDS), ' Its last words: "Error: broke on ••••••".'),
        (config(acp_agents=LONG_WORDS), f' Its last words: "Error: {"x" * 280} ••••••".'),
        (config(acp_agents=TAIL_WORDS), ""),  # no line whole: no last words
    ],
    ids=["secret", "secret-across-the-cut", "secret-across-the-tail-kept"],
)
async def test_an_agents_last_words_are_masked_whole_before_they_are_cut(
    agent: Agent, notebook_in_tab: Any, shown: str
) -> None:
    async with notebook_in_tab("last.ipynb", "1") as (path, _tab):
        await agent.start(path, "crash", agent="scripted")
        conversation = await agent.ended(path)
    error = conversation["turn"]["error"]
    assert error == f"scripted exited with status 3.{shown}"
    assert CANARY[:10] not in json.dumps(conversation)  # not even the part before a cut
    assert CANARY[-10:] not in json.dumps(conversation)  # nor the part after one


async def test_an_agent_that_answers_with_an_error_ends_the_turn_with_its_words(
    agent: Agent, notebook_in_tab: Any
) -> None:
    """As Qwen Code and Codex answer a prompt when their model refuses them: a JSON-RPC
    error whose data holds what the model said."""
    async with notebook_in_tab("refused.ipynb", "1") as (path, _tab):
        await agent.start(path, f"say looking\nfail 401 Wrong API key: {CANARY}.", agent="scripted")
        conversation = await agent.ended(path)
        turn = conversation["turn"]
        await agent.start(path, "say still here", agent="scripted")
        after = await agent.ended(path)
    assert turn["state"] == "error"
    assert turn["error"] == "scripted answered with an error: 401 Wrong API key: ••••••."
    assert notices(conversation)[-1] == turn["error"]
    assert CANARY not in json.dumps(conversation)
    assert after["turn"]["state"] == "done" and said(after).endswith("still here")


SIGNED_OUT = {"scripted": {**SCRIPTED, "env": {"SCRIPTED_SIGNED_OUT": "1"}}}


@pytest.mark.parametrize("loop_config", [config(acp_agents=SIGNED_OUT)])
async def test_an_agent_that_is_not_signed_in_says_so_plainly(
    agent: Agent, notebook_in_tab: Any, api: Any
) -> None:
    async with notebook_in_tab("signin.ipynb", "1") as (path, _tab):
        await agent.start(path, "say hello", agent="scripted")
        conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "error"
    assert conversation["turn"]["error"] == (
        'scripted is not signed in: it answered "Authentication required". '
        "Sign it in on the server (as its own documentation says), then try again."
    )
    assert (await api("api", "jupyter-loop", "tokens"))["tokens"] == []  # its session ended


@pytest.mark.parametrize("loop_config", [config(acp_session_idle_timeout=0.5)])
async def test_an_idle_session_ends_with_its_process(
    agent: Agent, notebook_in_tab: Any, api: Any
) -> None:
    async with notebook_in_tab("idle.ipynb", "1") as (path, _tab):
        await agent.start(path, "pid", agent="scripted")
        pid = int(re.findall(r"pid (\d+)", said(await agent.ended(path)))[0])
        await wait_for(lambda: not is_running(pid), timeout=10)
        tokens = await api("api", "jupyter-loop", "tokens")
        await agent.start(path, "pid", agent="scripted")  # a new session
        again = int(re.findall(r"pid (\d+)", said(await agent.ended(path)))[-1])
    assert tokens["tokens"] == [] and again != pid


@pytest.mark.parametrize("loop_config", [config(acp_session_idle_timeout=0.5)])
async def test_a_server_stopping_while_an_idle_session_ends_still_ends_its_process(
    agent: Agent, write_notebook: Any, jp_serverapp: Any
) -> None:
    """The idle end of a session was cancelled with the reaper when the server stopped
    within the seconds an agent that ignores its closed input takes to end: its process
    outlived the server (a codex-acp process per test run was found left over)."""
    path = write_notebook("stubborn.ipynb", "1")
    await agent.start(path, "say hello", agent="stubborn")
    await agent.ended(path)
    service = jp_serverapp.web_app.settings["jupyter_loop_acp"]
    [leader] = service.processes()
    await wait_for(lambda: service.processes() == [], timeout=10)  # its idle end began
    assert is_running(leader)  # (its input closed, it waits 2 s before a signal)
    await service.stop()
    assert not is_running(leader)


async def test_the_agents_runs_and_journal_name_the_agent_and_its_person(
    agent: Agent, notebook_in_tab: Any, api: Any
) -> None:
    async with notebook_in_tab("named.ipynb", "print(6 * 7)") as (path, tab):
        run = json.dumps({"path": path, "cell_ids": ["c0"], "wait_seconds": 60})
        await agent.start(path, f"mcp run_cells {run}", agent="scripted")
        approval = await approval_in(tab)
        await agent.approve(path, approval["id"], "once")
        conversation = await agent.ended(path)
    assert "42" in said(conversation)
    # Who asked is what the server knows (the session's token is the agent's), not what
    # the agent's MCP client calls itself.
    who = conversation["turn"]["started_by"]
    assert approval["requested_by"] == f"scripted for {who}"
    reply = await api("api", "jupyter-loop", "history", params={"path": path, "cell_id": "c0"})
    assert reply["runs"][0]["by"] == f"scripted for {who}"
    journal = await agent.journal(path)
    assert {f"scripted for {who}"} == {e["by"] for e in journal if e["action"] == "external_call"}


async def test_thoughts_plans_diffs_and_commands_are_shown(
    agent: Agent, notebook_in_tab: Any
) -> None:
    script = "commands\nthink I should divide by one\nplan\ndiff a.py x=1/0 x=1/1\nsay Fixed."
    async with notebook_in_tab("shown.ipynb", "1") as (path, tab):
        await agent.start(path, script, agent="scripted")
        conversation = await agent.ended(path)
        state = await wait_for(
            lambda: agent_state(tab) if agent_state(tab)["turn"]["state"] == "done" else None
        )
    live = {e["kind"]: e for e in state["live"]}
    # The thought, whole, as an entry of its own (the panel shows it collapsed).
    assert live["thought"]["text"] == "I should divide by one"
    notes = notices(conversation)
    assert "Plan:\n✓ read the error\n→ fix the cell\n• run it again" in notes
    assert "Commands: /explain (Explain the selected cell), /fix (Fix the last error)" in notes
    # The tool call's diff, as a unified diff of its path.
    assert "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-x=1/0\n+x=1/1" in live["tool"]["detail"]
    roles = [m["role"] for m in conversation["messages"]]
    assert "thought" in roles and said(conversation) == "Fixed."
