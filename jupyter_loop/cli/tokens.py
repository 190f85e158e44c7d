"""``jupyter loop token create|list|revoke``: scoped tokens for outside agents.

``create`` prints what the token may do, then the token alone on its last line, so a script
can take it with ``tail -n 1``; it is shown this once (the server keeps only its hash).
"""

from __future__ import annotations

import re
import time
from typing import Any, TextIO

from .connection import Api, CliError
from .render import visible

TOKENS = ("api", "jupyter-loop", "tokens")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds_of(text: str) -> int:
    """``8h`` → 28800 (a number and one of s, m, h, d).

    Example:
        >>> seconds_of("8h"), seconds_of("90m"), seconds_of("2d")
        (28800, 5400, 172800)
    """
    found = re.fullmatch(r"([0-9]{1,6})([smhd])", text.strip())
    if not found or int(found.group(1)) == 0:
        raise CliError(f"--expires takes a duration such as 30m, 8h or 7d, not {text!r}")
    return int(found.group(1)) * _UNITS[found.group(2)]


async def create_command(
    api: Api, scope: str, path: str | None, expires: str | None, out: TextIO
) -> int:
    body: dict[str, Any] = {"scope": scope}
    if path:
        body["notebook"] = path
    if expires:
        body["expires_in"] = seconds_of(expires)
    made = await api.call(*TOKENS, method="POST", body=body)
    out.write(f"Made token {made['id']}: {describe(made)}.\n")
    out.write("It is shown this once; give it to the agent as its bearer token.\n")
    out.write(f"{made['token']}\n")
    return 0


async def list_command(api: Api, out: TextIO) -> int:
    tokens = (await api.call(*TOKENS))["tokens"]
    if not tokens:
        out.write("No tokens.\n")
    for token in tokens:
        out.write(f"{visible(str(token['id']))}  {describe(token)}\n")
    return 0


async def revoke_command(api: Api, token_id: str, out: TextIO) -> int:
    if not re.fullmatch(r"[0-9a-f]{1,32}", token_id):
        raise CliError(f"ID must be a token's id (see jupyter loop token list): {token_id!r}")
    await api.call(*TOKENS, token_id, method="DELETE")
    out.write(f"Revoked token {token_id}.\n")
    return 0


def describe(token: dict[str, Any], now: float | None = None) -> str:
    """``propose, notebook a.ipynb, expires 2026-11-27 18:00 UTC``.

    Example:
        >>> describe({"scope": "run", "notebook": None, "expires": None})
        'run, any notebook, never expires'
        >>> describe({"scope": "read", "notebook": "a.ipynb", "expires": 0.0}, now=1.0)
        'read, notebook a.ipynb, expired 1970-01-01 00:00 UTC'
    """
    where = f"notebook {visible(str(token['notebook']))}" if token["notebook"] else "any notebook"
    expires = token["expires"]
    if expires is None:
        until = "never expires"
    else:
        word = "expired" if expires <= (time.time() if now is None else now) else "expires"
        until = f"{word} {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(expires))}"
    return f"{visible(str(token['scope']))}, {where}, {until}"
