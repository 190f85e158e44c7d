"""Cell ids as nbformat allows them, checked in one place."""

from __future__ import annotations

import pytest

from jupyter_loop.cell_ids import check_cell_id, is_cell_id
from jupyter_loop.errors import BadRequest


@pytest.mark.parametrize("value", ["_", "-", "a" * 64, "Z9_-x", "-leading", "_leading"])
def test_nbformat_ids_are_cell_ids(value):
    assert is_cell_id(value) and check_cell_id(value) == value


@pytest.mark.parametrize("value", ["", "a" * 65, "a b", "a.b", "ü", "a/b", None, 5, ["a"]])
def test_anything_else_is_refused_naming_the_field(value):
    with pytest.raises(BadRequest, match="'cell_ids'"):
        check_cell_id(value, "cell_ids")
