"""The shared-document records of ``jupyter_loop/records.py`` agree with ``src/tokens.ts``."""

from __future__ import annotations

import re
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
from pycrdt import Doc, Map

from jupyter_loop import records
from jupyter_loop.agent.shared_turn import AGENT_MAP

TOKENS = Path(__file__).resolve().parents[1] / "src" / "tokens.ts"
FIELD = re.compile(r"^  (\w+)(\?)?: (.+);$")


def ts_interfaces(text: str) -> dict[str, dict[str, tuple[bool, bool]]]:
    """``{interface: {field: (optional, nullable)}}`` of the file's exported interfaces.

    >>> ts_interfaces("export interface IA {\\n  a: string;\\n  b?: number | null;\\n}")
    {'IA': {'a': (False, False), 'b': (True, True)}}
    """
    found: dict[str, dict[str, tuple[bool, bool]]] = {}
    for match in re.finditer(r"^export interface (\w+) \{\n(.*?)^\}", text, re.M | re.S):
        members = {}
        for line in match.group(2).splitlines():
            field = FIELD.match(line)
            if field:
                name, optional, kind = field.groups()
                members[name] = (optional is not None, "| null" in kind)
        found[match.group(1)] = members
    return found


def py_fields(record: type[records.Record]) -> dict[str, tuple[bool, bool]]:
    return {
        f.name: (f.default is not MISSING, f.name in record.NULLABLE)
        for f in fields(record)  # type: ignore[arg-type]
    }


@pytest.mark.parametrize("record", records.RECORDS, ids=lambda r: r.__name__)
def test_each_record_matches_its_typescript_interface(record: type[records.Record]) -> None:
    interfaces = ts_interfaces(TOKENS.read_text())
    assert record.TS in interfaces, f"src/tokens.ts has no interface {record.TS}"
    assert py_fields(record) == interfaces[record.TS]


def test_records_leave_out_absent_fields_and_write_null_where_typescript_allows_it() -> None:
    proposal = records.Proposal(id="p", turn_id="t", kind="delete", cell_id="c", status="pending")
    assert proposal.to_y()["new_source"] is None and "summary" in proposal.to_y()
    marker = records.CellMarker(state="queued", run_id="r")
    assert marker.to_y() == {"state": "queued", "run_id": "r"}


def test_counts_read_back_by_a_y_client_are_ints() -> None:
    """The document has one number type (pycrdt reads every number as a float, as JavaScript
    has no int): the typed reader gives the counts back as the ints that were written."""
    server = Doc()
    turn = records.TurnRecord(
        id="t",
        state="done",
        model="m",
        provider="openai",
        started_at="now",
        usage=records.TokenUsage(1200, 34),
        steps=25,
    )
    server.get(AGENT_MAP, type=Map)["turn"] = turn.to_y()
    tab = Doc()
    tab.apply_update(server.get_update())
    raw = tab.get(AGENT_MAP, type=Map)["turn"]
    assert raw["steps"] == 25 and float(raw["steps"]).is_integer()
    read = records.TurnRecord.from_y(raw)
    assert read == turn
    assert [type(v) for v in (read.steps, read.usage.input_tokens)] == [int, int]
