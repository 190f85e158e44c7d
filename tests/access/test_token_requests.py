"""The token routes answer a malformed request with a 4xx that says what is wrong, never a
500 (issue 42, D24: a list or object ``scope`` answered 500 with a traceback).

A small fuzz over body shapes: every field of ``POST tokens`` given every wrong JSON type,
bodies that are not objects, and ``DELETE tokens/ID`` of ids that are not there.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

TOKENS = ("api", "jupyter-loop", "tokens")

WRONG_VALUES: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    1.5,
    10**30,
    "",
    "nonsense",
    [],
    ["read"],
    {},
    {"scope": "read"},
    [[{"a": 1}]],
)
"""Every JSON type, and values that look almost right (a scope in a list, in an object)."""

FIELDS = {"scope": "read", "notebook": "nb.ipynb", "expires_in": 3600}


def bodies() -> list[bytes]:
    """Each field wrong-typed alone and two at a time, and bodies that are not objects."""
    shapes: list[Any] = []
    for field, wrong in itertools.product(FIELDS, WRONG_VALUES):
        shapes.append({**FIELDS, field: wrong})
    for (one, two), wrong in itertools.product(
        itertools.combinations(FIELDS, 2), WRONG_VALUES[::3]
    ):
        shapes.append({**FIELDS, one: wrong, two: wrong})
    shapes += [{}, [], ["read"], "read", 3, None, {"scope": {"read": True}}]
    raw = [json.dumps(shape).encode() for shape in shapes]
    return [*raw, b"{", b"\xff\xfe", b'{"scope": "\\ud800"}', b""]


async def test_malformed_token_requests_are_4xx_with_a_message(jp_fetch: Any) -> None:
    sent = bodies()
    assert len(sent) > 60
    answers: dict[int, list[bytes]] = {}
    for body in sent:
        response = await jp_fetch(*TOKENS, method="POST", body=body, raise_error=False)
        answers.setdefault(response.code, []).append(body)
        if response.code == 201:  # a well-formed body among the fuzzed ones
            continue
        assert 400 <= response.code < 500, (body, response.code, response.body[:300])
        message = json.loads(response.body)["message"]
        assert message and "Traceback" not in message, (body, message)
    assert set(answers) <= {201, 400, 403}, {code: len(b) for code, b in answers.items()}
    assert len(answers.get(400, [])) > 50

    for token_id in ("0", "abc", "f" * 32):
        response = await jp_fetch(*TOKENS, token_id, method="DELETE", raise_error=False)
        assert response.code == 404, (token_id, response.code)
        assert "No token" in json.loads(response.body)["message"]
    listed = json.loads((await jp_fetch(*TOKENS)).body)["tokens"]
    assert len(listed) == len(answers.get(201, []))


async def test_a_scope_that_is_not_a_string_says_which_scopes_there_are(jp_fetch: Any) -> None:
    for scope in (["read"], {"read": True}):
        body = json.dumps({"scope": scope})
        response = await jp_fetch(*TOKENS, method="POST", body=body, raise_error=False)
        assert response.code == 400
        assert json.loads(response.body)["message"].startswith("'scope' must be one of: read")
