"""People in front of the proxy: their keys, their budgets and what they spent.

``keys`` (key records, budgets as written), ``accounts`` and ``redis_accounts`` (where
they are kept, with the atomic reservation), ``ledger`` (one row per request),
``writer`` and ``spool`` (rows written by one thread, kept while the database is down),
``gate`` (what the app calls: identify, admit, settle). docs/proxy.md, "For operators".
"""

from __future__ import annotations

from toolwire.proxy.people.accounts import Accounts, open_accounts
from toolwire.proxy.people.gate import BudgetExceededError, Caller, Hold, People, metered
from toolwire.proxy.people.keys import Budget, KeyRecord, parse_budget
from toolwire.proxy.people.ledger import LedgerRow, open_ledger
from toolwire.proxy.people.writer import Writer

__all__ = [
    "Accounts",
    "Budget",
    "BudgetExceededError",
    "Caller",
    "Hold",
    "KeyRecord",
    "LedgerRow",
    "People",
    "Writer",
    "metered",
    "open_accounts",
    "open_ledger",
    "parse_budget",
]
