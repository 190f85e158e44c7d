"""Tool arguments are checked against the tools' own JSON schemas, by one validator."""

from __future__ import annotations

import json

import pytest

from jupyter_loop.agent.tools import TOOL_SPECS, given, schema_violation

SPECS = {spec.name: spec.parameters for spec in TOOL_SPECS}


@pytest.mark.parametrize(
    ("name", "missing"),
    [(spec.name, key) for spec in TOOL_SPECS for key in spec.parameters["required"]],
)
def test_every_required_argument_of_every_tool_is_required(name: str, missing: str) -> None:
    complete = {key: _example(SPECS[name]["properties"][key]) for key in SPECS[name]["required"]}
    assert schema_violation(complete, SPECS[name]) is None
    del complete[missing]
    assert schema_violation(complete, SPECS[name]) == f"'{missing}' is required."


def _example(schema: dict) -> object:
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    return {"string": "c1", "integer": 1, "array": ["c1"]}.get(str(kind), "code")


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ('{"cell_id": "c1", "offset": 1e400}', "'offset' must be a finite number, not inf."),
        ('{"cell_id": "c1", "offset": -1e400}', "'offset' must be a finite number, not -inf."),
        ('{"cell_id": "c1", "offset": NaN}', "'offset' must be a finite number, not nan."),
        ('{"cell_id": "c1", "offset": 2.5}', "'offset' must be an integer."),
        ('{"cell_id": "c1", "offset": true}', "'offset' must be an integer."),
        ('{"cell_id": 7}', "'cell_id' must be a string."),
    ],
)
def test_read_cell_numbers_and_types(arguments: str, words: str) -> None:
    assert schema_violation(json.loads(arguments), SPECS["read_cell"]) == words


def test_enums_nulls_and_list_items() -> None:
    insert = given({"after_cell_id": None, "source": "x", "summary": "s"}, SPECS["propose_insert"])
    assert [
        schema_violation(insert, SPECS["propose_insert"]),
        schema_violation({**insert, "cell_type": "sql"}, SPECS["propose_insert"]),
        schema_violation({"cell_ids": ["c1", 2]}, SPECS["run_cells"]),
    ] == [
        None,
        "'cell_type' must be one of 'code', 'markdown', 'raw'.",
        "'cell_ids[1]' must be a string.",
    ]
