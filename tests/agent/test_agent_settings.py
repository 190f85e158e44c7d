"""Provider choice from config and environment, request payloads, and cell snapshots."""

from __future__ import annotations

import pytest
from jupyter_ydoc import YNotebook

from jupyter_loop.agent.payloads import ApprovalAnswer, TurnRequest
from jupyter_loop.agent.settings import AgentSettings
from jupyter_loop.document import set_source
from jupyter_loop.errors import BadRequest
from jupyter_loop.notebook_view.snapshot import NotebookSnapshots
from jupyter_loop.secrets import SecretMasker


@pytest.mark.parametrize(
    ("settings", "kind", "model"),
    [
        ({}, None, None),
        ({"environ": {"OPENAI_API_KEY": "sk-x"}}, "openai", "gpt-4o-mini"),
        ({"environ": {"OPENAI_BASE_URL": "http://h/v1"}}, "openai", None),
        ({"environ": {"OLLAMA_HOST": "http://h:1"}}, "ollama", None),
        ({"ollama_host": "http://h:1", "model": "llama3.1"}, "ollama", "llama3.1"),
        ({"provider": "ollama", "environ": {"OPENAI_API_KEY": "sk-x"}}, "ollama", None),
    ],
)
def test_the_provider_follows_config_then_environment(settings, kind, model):
    values = {"environ": {}, **settings}
    chosen = AgentSettings(**values)
    assert chosen.provider_kind() == kind
    assert chosen.default_model() == model
    assert (chosen.make_provider() is None) == (kind is None)


def test_keys_stay_out_of_repr():
    settings = AgentSettings(openai_api_key="sk-hidden-123456", environ={})
    assert "sk-hidden" not in repr(settings)
    provider = settings.make_provider()
    assert provider is not None and "sk-hidden" not in repr(provider)
    assert "sk-hidden" not in repr(AgentSettings(masker=SecretMasker(["sk-hidden-123456"])))


def test_turn_requests_are_checked():
    request = TurnRequest.from_json(
        {"path": "a.ipynb", "message": "hi", "focus_cell_ids": ["c1", "c1"], "approval": "turn"}
    )
    assert request.focus_cell_ids == ("c1",) and request.approval == "turn"
    for bad in ({"path": "a", "message": 3}, {"path": "a", "message": "x", "model": ""}):
        with pytest.raises(BadRequest):
            TurnRequest.from_json(bad)
    with pytest.raises(BadRequest):
        ApprovalAnswer.from_json({"path": "a"})


def test_snapshots_reread_only_changed_cells():
    nb = YNotebook()
    for index in range(5):
        nb.append_cell(
            {"id": f"c{index}", "cell_type": "code", "source": f"{index}", "metadata": {}}
        )
    snapshots = NotebookSnapshots(None)
    assert [c.source for c in snapshots.cells(nb)] == ["0", "1", "2", "3", "4"]
    assert snapshots.reread == 5
    assert snapshots.cells(nb) and snapshots.reread == 0
    set_source(nb.ycells[3], "three")
    with nb.ydoc.transaction():
        nb.ycells[1]["execution_count"] = 7
    cells = snapshots.cells(nb)
    assert snapshots.reread == 2
    assert cells[3].source == "three" and cells[1].execution_count == 7
    del nb.ycells[0]
    assert [c.id for c in snapshots.cells(nb)] == ["c1", "c2", "c3", "c4"]
    assert snapshots.reread == 4
    snapshots.close()
    set_source(nb.ycells[0], "after close")
    assert snapshots.cells(nb)[0].source == "after close"  # a new subscription, all read
    snapshots.close()
