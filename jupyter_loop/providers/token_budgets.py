"""Daily token budgets an administrator sets: per user and per notebook, for every model call.

The assistant's turns and inline completions ask :meth:`BudgetAccount.check` before each
model call and :meth:`BudgetAccount.spend` what the model server said the call used (its
input and output tokens). Over the cap, a call is refused with a plain message: a turn
that has not started gets a 403; one under way ends with that message; a completion gets
the message instead of text. A day is a UTC day. Users are told apart by their principal
(:func:`jupyter_loop.access.identity.principal_of`), not their display name.

The counts are kept in one owner-only JSON file, written at most once a second while they
change and when the server stops: a crash of the server loses at most that second's count.
Rejected: a count per journal entry, summed when asked (a turn journals each model call,
but completions journal nothing, and a sum over a day's journals at every keystroke would
cost more than the completion).

Example:
    >>> budgets = TokenBudgets(None, BudgetLimits(per_user_day=1000), clock=lambda: 0.0)
    >>> account = budgets.account("user ada", "a.ipynb")
    >>> account.check(); account.spend(1200)
    >>> account.check()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    jupyter_loop.errors.Forbidden: You have used your model tokens for today (1,200 of 1,000); ...
    >>> budgets.usage("user ada")
    {'day': '1970-01-01', 'used': 1200, 'limit': 1000, 'left': 0}
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Forbidden
from ..owner_only import replace_private

WRITE_DELAY = 1.0
"""Seconds a changed count waits before it is written (changes meanwhile share the write)."""


@dataclass(frozen=True)
class BudgetLimits:
    """Tokens a day at most, per user and per notebook (None: no cap)."""

    per_user_day: int | None = None
    per_notebook_day: int | None = None


class TokenBudgets:
    """Today's token counts per user and per notebook, and the caps on them."""

    def __init__(
        self,
        path: Path | None,
        limits: BudgetLimits,
        *,
        clock: Callable[[], float] = time.time,
        log: logging.Logger | None = None,
    ) -> None:
        self.limits = limits
        self._path = path
        self._clock = clock
        self._log = log or logging.getLogger(__name__)
        self._day = ""
        self._users: dict[str, int] = {}
        self._notebooks: dict[str, int] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._load()

    def account(self, principal: str, notebook: str) -> BudgetAccount:
        return BudgetAccount(self, principal, notebook)

    def usage(self, principal: str) -> dict[str, Any]:
        """Today's count of ``principal``, its cap and what is left (None: no cap)."""
        self._roll()
        used = self._users.get(principal, 0)
        limit = self.limits.per_user_day
        left = None if limit is None else max(0, limit - used)
        return {"day": self._day, "used": used, "limit": limit, "left": left}

    def check(self, principal: str, notebook: str) -> None:
        self._roll()
        used, limit = self._users.get(principal, 0), self.limits.per_user_day
        if limit is not None and used >= limit:
            raise Forbidden(
                f"You have used your model tokens for today ({used:,} of {limit:,}); the "
                "administrator's cap (budget_tokens_per_user_day) resets at 00:00 UTC."
            )
        used, limit = self._notebooks.get(notebook, 0), self.limits.per_notebook_day
        if limit is not None and used >= limit:
            raise Forbidden(
                f"This notebook has used its model tokens for today ({used:,} of {limit:,}); "
                "the administrator's cap (budget_tokens_per_notebook_day) resets at 00:00 UTC."
            )

    def spend(self, principal: str, notebook: str, tokens: int) -> None:
        if tokens <= 0:
            return
        self._roll()
        self._users[principal] = self._users.get(principal, 0) + tokens
        self._notebooks[notebook] = self._notebooks.get(notebook, 0) + tokens
        self._write_soon()

    def close(self) -> None:
        """Write what changed now (the server stops)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._write()

    # -- the day's counts on disk --------------------------------------------------------

    def _today(self) -> str:
        return time.strftime("%Y-%m-%d", time.gmtime(self._clock()))

    def _roll(self) -> None:
        today = self._today()
        if today != self._day:
            self._day, self._users, self._notebooks = today, {}, {}

    def _load(self) -> None:
        self._roll()
        if self._path is None:
            return
        try:
            saved = json.loads(self._path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except ValueError as e:
            self._log.warning("jupyter-loop starts its token counts afresh (%s): %s", self._path, e)
            return
        if saved.get("day") == self._day:
            self._users = {str(k): int(v) for k, v in saved.get("users", {}).items()}
            self._notebooks = {str(k): int(v) for k, v in saved.get("notebooks", {}).items()}

    def _write_soon(self) -> None:
        if self._path is None or self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script): write at once
            self._write()
            return
        self._timer = loop.call_later(WRITE_DELAY, self._written)

    def _written(self) -> None:
        self._timer = None
        self._write()

    def _write(self) -> None:
        if self._path is None:
            return
        data = {"day": self._day, "users": self._users, "notebooks": self._notebooks}
        try:
            replace_private(self._path, json.dumps(data))
        except OSError as e:
            self._log.warning("jupyter-loop could not keep token counts in %s: %s", self._path, e)


@dataclass(frozen=True)
class BudgetAccount:
    """One user's model calls on one notebook: what a turn or a completion is given."""

    budgets: TokenBudgets
    principal: str
    notebook: str

    def check(self) -> None:
        """Raise :class:`Forbidden` (a plain message) when a cap is reached."""
        self.budgets.check(self.principal, self.notebook)

    def spend(self, tokens: int) -> None:
        self.budgets.spend(self.principal, self.notebook, tokens)
