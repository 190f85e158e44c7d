"""The one check of a tool call's arguments against its JSON schema (from :mod:`.specs`).

Models get arguments wrong: a required one left out, a number where a string goes, a number
JSON can write but Python cannot use (``1e400`` reads as infinity). Every tool's arguments are
checked here, from the schema the model was given, before the tool runs; the message goes
back to the model as a failed call, or to an MCP client as an error. Only the schema keywords
our specs use are understood (``type``, ``required``, ``properties``, ``items``, ``enum``,
``minLength``, ``minimum``); unknown arguments are ignored. An optional argument sent as
``null`` is one not given (:func:`given`): some clients send ``null`` for every optional
argument left out, and no schema of ours allows ``null`` (some providers' schema dialects
reject ``["string", "null"]``).

Example:
    >>> schema = {"type": "object", "required": ["cell_id"],
    ...           "properties": {"cell_id": {"type": "string"}, "offset": {"type": "integer"}}}
    >>> schema_violation({"offset": 3}, schema)
    "'cell_id' is required."
    >>> schema_violation({"cell_id": "c1", "offset": float("inf")}, schema)
    "'offset' must be a finite number, not inf."
    >>> schema_violation({"cell_id": "c1", "offset": 2.0}, schema) is None
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ...errors import JupyterLoopError


class ToolError(JupyterLoopError):
    """A tool call the model got wrong; its message goes back to the model."""

    status = 400


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def given(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` without the optional ones sent as ``null`` (a required one stays, for
    :func:`schema_violation` to name).

    >>> given({"cell_id": None, "offset": None}, {"required": ["cell_id"]})
    {'cell_id': None}
    """
    required = set(schema.get("required", ()))
    return {k: v for k, v in arguments.items() if v is not None or k in required}


def schema_violation(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> str | None:
    """What is wrong with ``arguments`` for ``schema`` (an object schema), or None."""
    for name in schema.get("required", ()):
        if name not in arguments:
            return f"'{name}' is required."
    properties = schema.get("properties", {})
    for name, value in arguments.items():
        problem = _value_violation(value, properties.get(name, {}), f"'{name}'")
        if problem is not None:
            return problem
    return None


def _value_violation(value: Any, schema: Mapping[str, Any], where: str) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where} must be a finite number, not {value}."
    types = schema.get("type")
    allowed = [types] if isinstance(types, str) else list(types or [])
    if allowed and not any(_is(value, kind) for kind in allowed):
        words = " or ".join(_TYPE_WORDS.get(kind, kind) for kind in allowed)
        return f"{where} must be {words}."
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        return f"{where} must be one of {', '.join(repr(item) for item in enum)}."
    shortest = schema.get("minLength")
    if shortest is not None and isinstance(value, str) and len(value) < shortest:
        return f"{where} must not be empty." if shortest == 1 else f"{where} is too short."
    least = schema.get("minimum")
    if least is not None and _is_number(value) and value < least:
        return f"{where} must be {least} or more."
    if isinstance(value, list):
        items = schema.get("items", {})
        for position, item in enumerate(value):
            problem = _value_violation(item, items, f"{where[:-1]}[{position}]'")
            if problem is not None:
                return problem
    return None


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return _is_number(value) and float(value).is_integer()
    checks = {
        "string": lambda v: isinstance(v, str),
        "number": _is_number,
        "boolean": lambda v: isinstance(v, bool),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, Mapping),
        "null": lambda v: v is None,
    }
    check = checks.get(kind)
    return check(value) if check is not None else True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- reading checked arguments (a tool's own rules beyond its schema) ----------------


def arg_str(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise ToolError(f"'{key}' must be a non-empty string.")
    return value


def arg_text(args: dict[str, Any], key: str, default: str | None = None) -> str:
    value = args.get(key, default)
    if not isinstance(value, str):
        raise ToolError(f"'{key}' must be a string.")
    return value


def arg_int(args: dict[str, Any], key: str, default: int) -> int:
    value = arg_optional_int(args, key)
    return default if value is None else value


def arg_optional_int(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ToolError(f"'{key}' must be an integer.")
    if value < 0:
        raise ToolError(f"'{key}' must not be negative.")
    return int(value)


def arg_str_list(args: dict[str, Any], key: str) -> list[str]:
    value = args.get(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ToolError(f"'{key}' must be a non-empty list of cell ids.")
    if not all(isinstance(item, str) and item for item in value):
        raise ToolError(f"'{key}' must contain only cell ids (strings).")
    return list(dict.fromkeys(value))
