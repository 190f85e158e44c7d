"""Cell ids as nbformat defines them: 1 to 64 characters from ``[A-Za-z0-9_-]``.

The one check of a cell id that comes from outside (a request, a route).

Example:
    >>> check_cell_id("_private")
    '_private'
    >>> check_cell_id("a.b")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    jupyter_loop.errors.BadRequest: 'cell_id': 'a.b' is not a cell id (1 to 64 letters, ...
"""

from __future__ import annotations

import re

from .errors import BadRequest

CELL_ID_PATTERN = r"[A-Za-z0-9_-]{1,64}"
_CELL_ID = re.compile(CELL_ID_PATTERN)


def is_cell_id(value: object) -> bool:
    return isinstance(value, str) and _CELL_ID.fullmatch(value) is not None


def check_cell_id(value: object, field: str = "cell_id") -> str:
    """``value`` if it is a valid cell id; else :class:`BadRequest` naming the field."""
    if not is_cell_id(value):
        shown = repr(value) if isinstance(value, str) else f"a {type(value).__name__}"
        raise BadRequest(
            f"'{field}': {shown} is not a cell id (1 to 64 letters, digits, '_' or '-')."
        )
    return str(value)
