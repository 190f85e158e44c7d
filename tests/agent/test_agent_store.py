"""The durable conversation store and the journal: plain files, reloaded by a fresh instance."""

from __future__ import annotations

import json

import pytest

from jupyter_loop.agent.journal import AgentJournal
from jupyter_loop.agent.store import ConversationStore
from jupyter_loop.errors import BadRequest
from jupyter_loop.secrets import SecretMasker


def test_a_fresh_store_reloads_messages_and_turns(tmp_path):
    store = ConversationStore(tmp_path)
    store.save_turn("file-1", {"id": "t1", "state": "running"})
    store.add_message("file-1", turn_id="t1", role="user", text="why?", by="ada")
    store.add_message(
        "file-1", turn_id="t1", role="tool", text="read cell 2", tool={"name": "read_cell"}
    )
    store.add_message("file-1", turn_id="t1", role="notice", text="slow", level="info")
    store.save_turn("file-1", {"id": "t1", "state": "done"})
    store.save_turn("file-1", {"id": "t2", "state": "error"})

    reloaded = ConversationStore(tmp_path)  # as after a server restart
    messages = reloaded.messages("file-1")
    assert [(m["role"], m["text"]) for m in messages] == [
        ("user", "why?"),
        ("tool", "read cell 2"),
        ("notice", "slow"),
    ]
    assert messages[0]["by"] == "ada" and messages[1]["tool"] == {"name": "read_cell"}
    assert messages[2]["level"] == "info" and all(m["created_at"] for m in messages)
    assert [(t["id"], t["state"]) for t in reloaded.turns("file-1")] == [
        ("t1", "done"),
        ("t2", "error"),
    ]
    assert reloaded.last_turn("file-1") == {"id": "t2", "state": "error"}
    assert reloaded.messages("other") == [] and reloaded.last_turn("other") is None


def test_a_torn_last_line_is_skipped(tmp_path):
    store = ConversationStore(tmp_path)
    store.add_message("f", turn_id="t", role="user", text="kept")
    with (tmp_path / "f.jsonl").open("a", encoding="utf-8") as stream:
        stream.write('{"type": "message", "text": "torn')
    assert [m["text"] for m in ConversationStore(tmp_path).messages("f")] == ["kept"]


@pytest.mark.parametrize("file_id", ["../etc/passwd", "a/b", "", "x" * 200])
def test_file_ids_cannot_escape_the_directory(tmp_path, file_id):
    with pytest.raises(BadRequest):
        ConversationStore(tmp_path).messages(file_id)


def test_the_journal_masks_and_lists_entries(tmp_path):
    journal = AgentJournal(tmp_path, SecretMasker(["s3cret-value-1"]))
    journal.record("f", "t1", "tool_call", "agent for ada", receipt="saw s3cret-value-1")
    journal.record("f", "t1", "accept", "ada", proposal_id="p-1")
    entries = AgentJournal(tmp_path, None).entries("f")
    assert [(e["action"], e["by"]) for e in entries] == [
        ("tool_call", "agent for ada"),
        ("accept", "ada"),
    ]
    assert entries[0]["details"] == {"receipt": "saw ••••••"}
    assert entries[0]["turn_id"] == "t1" and entries[0]["at"].endswith("Z")
    assert "s3cret-value-1" not in (tmp_path / "f.jsonl").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "f.jsonl").read_text().splitlines()[1])["action"] == "accept"


def test_a_new_conversation_is_read_from_its_start_and_keeps_the_lines_before(tmp_path):
    store = ConversationStore(tmp_path)
    store.add_message("f", turn_id="t1", role="user", text="old question")
    store.save_turn("f", {"id": "t1", "state": "error"})
    assert store.conversation("f") is None
    started = store.start_conversation("f", "ada")
    store.add_message("f", turn_id="t2", role="user", text="new question")

    reloaded = ConversationStore(tmp_path)
    assert [m["text"] for m in reloaded.messages("f")] == ["new question"]
    assert reloaded.turns("f") == [] and reloaded.last_turn("f") is None
    assert reloaded.conversation("f") == started and started["by"] == "ada"
    kept = (tmp_path / "f.jsonl").read_text(encoding="utf-8")
    assert "old question" in kept  # nothing is deleted
