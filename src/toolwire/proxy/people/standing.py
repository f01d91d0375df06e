"""Where a budget stands: spent this window, what is left, when it resets.

Spent is the window's counter in the accounts store, so it counts what requests in
flight reserved (their worst case) as well as what finished ones cost: what is left is
what a new request may still reserve. ``keys list``, ``budget show``, the admin API, the
page and the headers of every keyed response (``BUDGET_HEADERS``) all read it here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from toolwire.proxy.people.accounts import Accounts
from toolwire.proxy.people.keys import MICROS, Budget

REMAINING = "x-toolwire-budget-remaining-usd"
LIMIT = "x-toolwire-budget-limit-usd"
RESET = "x-toolwire-budget-reset"
SUBJECT = "x-toolwire-budget-subject"
BUDGET_HEADERS = (REMAINING, LIMIT, RESET, SUBJECT)


@dataclass(frozen=True, slots=True)
class Standing:
    """``subject``'s ``budget`` at ``now`` with ``spent`` micro-dollars in its window."""

    subject: str
    budget: Budget
    spent: int
    now: float

    @property
    def left(self) -> int:
        return max(0, self.budget.limit - self.spent)

    @property
    def resets(self) -> float:
        return self.budget.resets(self.now)

    def to_json(self) -> dict[str, Any]:
        kind, _, name = self.subject.partition(":")
        return {
            kind: name,
            "limit_usd": self.budget.limit / MICROS,
            "period_seconds": self.budget.period,
            "spent_usd": self.spent / MICROS,
            "left_usd": self.left / MICROS,
            "resets": iso(self.resets),
        }

    def headers(self) -> list[tuple[bytes, bytes]]:
        values = (
            f"{self.left / MICROS:.6f}",
            f"{self.budget.limit / MICROS:.6f}",
            iso(self.resets),
            self.subject,
        )
        return [(n.encode(), v.encode()) for n, v in zip(BUDGET_HEADERS, values, strict=True)]


def iso(at: float) -> str:
    """``2026-12-01T00:00:00Z``."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def standings(
    accounts: Accounts, subjects: Iterable[str], budgets: Mapping[str, Budget] | None = None
) -> list[Standing]:
    """The standing of each of ``subjects`` with a budget (``budgets``: already read)."""
    found = dict(accounts.budgets(subjects) if budgets is None else budgets)
    if not found:
        return []
    now = accounts.now()
    return [Standing(s, b, accounts.spent(f"{s}:{b.window(now)}"), now) for s, b in found.items()]


def tightest(found: Iterable[Standing]) -> Standing | None:
    """The standing with the least left (the one a request would hit first)."""
    return min(found, key=lambda s: s.left, default=None)


__all__ = ["BUDGET_HEADERS", "Standing", "iso", "standings", "tightest"]
