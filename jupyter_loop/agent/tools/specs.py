"""The tools the model may call, as JSON schemas (what :mod:`.tools` implements).

Names match the paging hints of the context (``notebook_map`` from a cell number, ``read_cell``
with ``offset=`` and an output index).
"""

from __future__ import annotations

from typing import Any

from ...providers import ToolSpec


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_CELL_ID = {"type": "string", "description": "The cell's id, as in the notebook map."}
_SUMMARY = {"type": "string", "description": "One line saying what the change does and why."}

TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "notebook_map",
        "The map tool: one line per cell (number, id, type, execution count, first line, "
        "output summary), from a cell number (cells count from 1). Use it to see cells the "
        "map in your context left out.",
        _object(
            {
                "start": {"type": "integer", "description": "First cell number (default 1)."},
                "count": {"type": "integer", "description": "How many cells (default 100)."},
            },
            [],
        ),
    ),
    ToolSpec(
        "read_cell",
        "Read a cell: its full source and its outputs, summarised. Long text is cut as head "
        "and tail with an 'offset=N' marker: call again with that offset (and output_index for "
        "an output) to read on.",
        _object(
            {
                "cell_id": _CELL_ID,
                "output_index": {
                    "type": "integer",
                    "description": "Read this output ([index] in the summary) instead.",
                },
                "offset": {
                    "type": "integer",
                    "description": "Character offset to read from (source, or the output).",
                },
            },
            ["cell_id"],
        ),
    ),
    ToolSpec(
        "list_variables",
        "List the kernel's user variables: name, type, shape or length, a dataframe's "
        "columns with dtypes, the value of simple scalars. Read-only: it runs no code of "
        "yours and nothing appears in the notebook. Fails while the kernel is busy.",
        _object({}, []),
    ),
    ToolSpec(
        "propose_modify",
        "Propose new source for a cell. The user sees a diff and accepts or rejects it; the "
        "cell is unchanged until then.",
        _object(
            {
                "cell_id": _CELL_ID,
                "source": {"type": "string", "description": "The cell's complete new source."},
                "summary": _SUMMARY,
            },
            ["cell_id", "source", "summary"],
        ),
    ),
    ToolSpec(
        "propose_insert",
        "Propose a new cell after a cell (after_cell_id left out: at the top). The user "
        "accepts or rejects it.",
        _object(
            {
                # Optional rather than ``["string", "null"]``: some providers' schema
                # dialects reject union types.
                "after_cell_id": {
                    "type": "string",
                    "description": "The cell to insert after; leave it out for the top.",
                },
                "cell_type": {"type": "string", "enum": ["code", "markdown", "raw"]},
                "source": {"type": "string", "description": "The new cell's source."},
                "summary": _SUMMARY,
            },
            ["source", "summary"],
        ),
    ),
    ToolSpec(
        "propose_delete",
        "Propose deleting a cell. The user accepts or rejects it.",
        _object({"cell_id": _CELL_ID, "summary": _SUMMARY}, ["cell_id", "summary"]),
    ),
    ToolSpec(
        "run_cells",
        "Run code cells, in order, on the notebook's kernel, and wait for their outputs. "
        "The user may have to approve first, and may refuse.",
        _object(
            {"cell_ids": {"type": "array", "items": _CELL_ID, "description": "Cells to run."}},
            ["cell_ids"],
        ),
    ),
)

TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in TOOL_SPECS)
