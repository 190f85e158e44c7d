"""The shared-document records of ``jupyter_loop/records.py`` agree with ``src/payloads.ts``."""

from __future__ import annotations

import re
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
from pycrdt import Doc, Map

from jupyter_loop import records
from jupyter_loop.agent.proposals import PROPOSALS_MAP
from jupyter_loop.agent.shared_turn import AGENT_MAP
from jupyter_loop.execution.board import BOARD, KERNEL_LIFE

PAYLOADS = Path(__file__).resolve().parents[2] / "src" / "payloads.ts"
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


TYPE_ALIAS = re.compile(r"^export type (\w+) =\s*(.*?);$", re.M | re.S)
PY_KINDS = {"str": "string", "int": "number", "float": "number", "bool": "boolean"}


def ts_kinds(kind: str, aliases: dict[str, str]) -> frozenset[str]:
    """What a TypeScript field type admits, in coarse kinds (aliases resolved).

    >>> sorted(ts_kinds("'a' | Level | number | null", {"Level": "'x' | 'y'"}))
    ['number', 'string']
    >>> sorted(ts_kinds("string[] | { [id: string]: string } | IThing", {}))
    ['IThing', 'array', 'object']
    """
    found: set[str] = set()
    for part in (p.strip() for p in kind.split("|")):
        if part in ("", "null", "undefined"):
            continue
        if part in aliases:
            found |= ts_kinds(aliases[part], aliases)
        elif part == "string" or part[0] in "'\"":
            found.add("string")
        elif part in ("number", "boolean"):
            found.add(part)
        elif part.endswith("[]") or part.startswith(("ReadonlyArray<", "Array<")):
            found.add("array")
        elif part.startswith("{"):
            found.add("object")
        else:
            found.add(part)  # an interface
    return frozenset(found)


def py_kinds(annotation: str) -> frozenset[str]:
    """What a record's field may hold, in the same kinds (a nested record: its interface).

    >>> sorted(py_kinds("tuple[str, ...] | None")), sorted(py_kinds("TokenUsage | None"))
    (['array'], ['ITokenUsage'])
    """
    found: set[str] = set()
    for part in (p.strip() for p in annotation.split("|")):
        if part == "None":
            continue
        if part in PY_KINDS:
            found.add(PY_KINDS[part])
        elif part.startswith(("tuple[", "list[")):
            found.add("array")
        elif part.startswith("dict["):
            found.add("object")
        else:
            found.add(getattr(records, part).TS)
    return frozenset(found)


def py_fields(record: type[records.Record]) -> dict[str, tuple[bool, bool]]:
    return {
        f.name: (f.default is not MISSING, f.name in record.NULLABLE)
        for f in fields(record)  # type: ignore[arg-type]
    }


@pytest.mark.parametrize("record", records.RECORDS, ids=lambda r: r.__name__)
def test_each_record_matches_its_typescript_interface(record: type[records.Record]) -> None:
    interfaces = ts_interfaces(PAYLOADS.read_text())
    assert record.TS in interfaces, f"src/payloads.ts has no interface {record.TS}"
    assert py_fields(record) == interfaces[record.TS]


@pytest.mark.parametrize("record", records.RECORDS, ids=lambda r: r.__name__)
def test_what_each_record_writes_its_typescript_interface_reads(
    record: type[records.Record],
) -> None:
    """Field by field, every kind of value the server may write (a string, a number, an
    array, a nested record) is one the panel's type admits; TypeScript may admit more (a
    time written as a number by older servers)."""
    text = PAYLOADS.read_text()
    aliases = {name: body for name, body in TYPE_ALIAS.findall(text)}
    fields_ts = {}
    for match in re.finditer(rf"^export interface {record.TS} \{{\n(.*?)^\}}", text, re.M | re.S):
        for line in match.group(1).splitlines():
            if field := FIELD.match(line):
                fields_ts[field.group(1)] = ts_kinds(field.group(3), aliases)
    for f in fields(record):  # type: ignore[arg-type]
        written = py_kinds(str(f.type))
        assert written and written <= fields_ts[f.name], (f.name, written, fields_ts[f.name])


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


def test_the_shared_documents_names_agree() -> None:
    """The maps and awareness fields a tab reads are named alike on both sides (a tab
    reading another name sees an empty map and never says why)."""
    constants = dict(re.findall(r"^export const (\w+) = '([^']*)';$", PAYLOADS.read_text(), re.M))
    assert {
        "EXECUTION_BOARD": BOARD,
        "KERNEL_LIFE": KERNEL_LIFE,
        "AGENT_MAP": AGENT_MAP,
        "PROPOSALS_MAP": PROPOSALS_MAP,
        "FOCUS_FIELD": records.FOCUS_FIELD,
        "AGENT_FIELD": records.AGENT_FIELD,
    }.items() <= constants.items()
