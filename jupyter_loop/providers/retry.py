"""Our own retry policy for rate limits (the client libraries' retries are switched off).

Only a 429 is retried, only before anything has streamed, a bounded number of times, and
never for longer than a cap: a server that asks for a longer wait gets an immediate, clear
error instead of a request that hangs for minutes.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from .errors import ProviderError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How rate-limited requests are retried.

    Attributes:
        max_rate_limit_retries: Retries after a 429 (0: fail at once).
        max_wait: The longest single wait, in seconds; a server asking for more is not
            waited for.
        default_wait: The first wait when the server does not say (doubles each retry).
    """

    max_rate_limit_retries: int = 2
    max_wait: float = 20.0
    default_wait: float = 1.0

    def wait_for(self, retry_after: float | None, attempt: int) -> float | None:
        """Seconds to wait before retry number ``attempt`` (0-based), or None to give up."""
        if retry_after is not None:
            return max(0.0, retry_after) if retry_after <= self.max_wait else None
        return min(self.default_wait * 2**attempt, self.max_wait)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a response's headers ask to wait before retrying, if they say.

    Reads ``retry-after-ms`` (OpenAI), then ``retry-after`` as seconds or an HTTP date.

    Example:
        >>> parse_retry_after({"retry-after": "3"})
        3.0
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    try:
        if "retry-after-ms" in lowered:
            return float(lowered["retry-after-ms"]) / 1000.0
        value = lowered.get("retry-after")
        if value is None:
            return None
        return float(value)
    except ValueError:
        pass
    parsed = email.utils.parsedate_to_datetime(value) if value else None
    if parsed is None:
        return None
    return max(0.0, parsed.timestamp() - (time.time() if now is None else now))


async def retry_rate_limited(
    attempt_once: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Await ``attempt_once()``, retrying it on rate-limit errors as ``policy`` allows.

    Raises:
        ProviderError: The last error; for rate limits, its message says how many
            retries were made or that the server asked for too long a wait.
    """
    attempt = 0
    while True:
        try:
            return await attempt_once()
        except ProviderError as e:
            if e.kind != "rate_limit":
                raise
            wait = policy.wait_for(e.retry_after, attempt)
            if wait is None:
                raise _gave_up(e, f"It asked to wait {e.retry_after:g} s.") from None
            if attempt >= policy.max_rate_limit_retries:
                tries = "retry" if attempt == 1 else "retries"
                note = f"Still refused after {attempt} {tries}." if attempt else ""
                raise _gave_up(e, note) from None
            await sleep(wait)
            attempt += 1


def _gave_up(error: ProviderError, note: str) -> ProviderError:
    message = f"{error.message} {note}".strip() if note else error.message
    return ProviderError(
        message,
        kind="rate_limit",
        provider=error.provider,
        retry_after=error.retry_after,
        status_code=error.status_code,
    )
