"""What the admin API and the team's page read and change, as plain data: keys (never a
secret but at creation), budgets and where they stand, spend from the ledger, the last
requests, the backends' health. Every method blocks (a store, a database): callers run
them with ``OperatorData.run``, off the event loop.

The ledger is read through a connection of its own, opened at the first question and
opened again after an error (the writer thread keeps its own for the rows).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from toolwire.proxy.errors import BadRequestError, ProxyError
from toolwire.proxy.failover import Cooldowns, chain
from toolwire.proxy.intake import Intake
from toolwire.proxy.people.accounts import issue, rotate
from toolwire.proxy.people.keys import KeyRecord, parse_age, parse_budget
from toolwire.proxy.people.ledger import Ledger, LedgerRow, open_ledger
from toolwire.proxy.people.spending import Question, Spend
from toolwire.proxy.people.standing import Standing, iso, standings

_T = TypeVar("_T")


class NotFoundError(ProxyError):
    """What a request names does not exist."""

    status = 404
    kind = "not_found_error"


class OperatorData:
    """The proxy's keys, budgets, ledger and backends for the person running it."""

    def __init__(self, intake: Intake, cooldowns: Cooldowns) -> None:
        self.settings, self.people, self.cooldowns = intake.settings, intake.people, cooldowns
        self._ledger: Ledger | None = None
        self._lock = threading.Lock()

    async def run(self, work: Callable[[], _T]) -> _T:
        return await asyncio.to_thread(work)

    # -- keys and budgets --------------------------------------------------------------

    def keys(self) -> list[dict[str, Any]]:
        """Every key as JSON (no digest, no secret), with its user's budget standing."""
        accounts, now = self.people.accounts, time.time()
        records = accounts.records()
        users = {f"user:{r.user}" for r in records}
        found = {s.subject: s for s in standings(accounts, users)}
        return [key_json(r, now, found.get(f"user:{r.user}")) for r in records]

    def create(self, data: dict[str, Any]) -> tuple[KeyRecord, str]:
        user, team = _text(data, "user", required=True), _text(data, "team")
        models = data.get("models") or []
        if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            raise BadRequestError("models must be a list of patterns (strings)")
        expires = _age(data, "expires")
        try:
            return issue(self.people.accounts, str(user), team=team, budget=_text(data, "budget"),
                         models=tuple(models), admin=data.get("admin") is True,
                         expires=None if expires is None else time.time() + expires)  # fmt: skip
        except ValueError as e:
            raise BadRequestError(str(e)) from e

    def revoke(self, key_id: str) -> KeyRecord:
        accounts = self.people.accounts
        if not accounts.revoke(key_id):
            raise NotFoundError(f"no key {key_id!r}; GET /admin/keys lists them")
        (record,) = [r for r in accounts.records() if r.id == key_id]
        return record

    def rotate(self, key_id: str, data: dict[str, Any]) -> tuple[KeyRecord, str, KeyRecord]:
        grace, expires = _age(data, "grace"), _age(data, "expires")
        until = None if expires is None else time.time() + expires
        try:
            return rotate(self.people.accounts, key_id, 86400 if grace is None else grace,
                          expires=until)  # fmt: skip
        except KeyError:
            raise NotFoundError(f"no usable key {key_id!r}; GET /admin/keys lists them") from None

    def budget(self, subject: str) -> Standing:
        found = standings(self.people.accounts, [subject])
        if not found:
            raise NotFoundError(f"{subject.replace(':', ' ', 1)} has no budget")
        return found[0]

    def set_budget(self, subject: str, text: str) -> Standing:
        try:
            parsed = parse_budget(text, time.time())
        except ValueError as e:
            raise BadRequestError(str(e)) from e
        self.people.accounts.set_budget(subject, parsed)
        return self.budget(subject)

    def budgets(self, subjects: set[str]) -> list[Standing]:
        return sorted(standings(self.people.accounts, subjects), key=lambda s: s.subject)

    # -- the ledger and the backends ---------------------------------------------------

    def spend(self, question: Question) -> list[Spend]:
        return self._read(lambda ledger: ledger.spend(question))

    def recent(self, count: int) -> list[LedgerRow]:
        return self._read(lambda ledger: ledger.recent(count))

    def _read(self, work: Callable[[Ledger], _T]) -> _T:
        if not self.settings.ledger:
            raise BadRequestError("no ledger: set [proxy] ledger to a SQLite file or a "
                                  "postgresql:// URL")  # fmt: skip
        with self._lock:
            if self._ledger is None:
                self._ledger = open_ledger(self.settings.ledger)
            ledger = self._ledger
            try:
                return work(ledger)
            except Exception:
                self._ledger = None  # opened again at the next question
                ledger.close()
                raise

    def backends(self) -> list[dict[str, Any]]:
        """Each backend, its failover chain, and whether it is cooling down (every
        replica's cooldowns when they are shared)."""
        pull = getattr(self.cooldowns, "pull", None)
        if pull is not None:
            pull()
        backends = self.settings.config.backends
        fallbacks = {n: b.fallbacks for n, b in backends.items()}
        found = []
        for name, b in backends.items():
            left, streak = self.cooldowns.standing(name)
            found.append({"name": name, "provider": b.provider, "model": b.model,
                          "fails_over_to": chain(name, fallbacks)[1:], "cooling": left > 0,
                          "cooling_seconds": round(left, 1),
                          "failures_in_a_row": streak})  # fmt: skip
        return found

    def close(self) -> None:
        with self._lock:
            if self._ledger is not None:
                self._ledger.close()
                self._ledger = None


def key_json(r: KeyRecord, now: float, standing: Standing | None = None) -> dict[str, Any]:
    """A key as the admin API shows it: never its secret nor its digest."""
    data: dict[str, Any] = {
        "id": r.id, "user": r.user, "team": r.team, "models": list(r.models),
        "role": "admin" if r.admin else "person", "budget": r.budget,
        "created": iso(r.created), "expires": None if r.expires is None else iso(r.expires),
        "state": r.state(now),
    }  # fmt: skip
    if standing is not None:
        shown = standing.to_json()
        data.update(spent_usd=shown["spent_usd"], left_usd=shown["left_usd"])
    return data


def _text(data: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadRequestError(f"{name} must be a non-empty string")
    return value.strip()


def _age(data: dict[str, Any], name: str) -> float | None:
    text = _text(data, name)
    if text is None:
        return None
    try:
        return parse_age(text)
    except ValueError as e:
        raise BadRequestError(f"{name}: {e}") from e


def subject_of(user: str | None, team: str | None) -> str:
    """``user:NAME`` or ``team:NAME`` from exactly one of them."""
    if (user is None) == (team is None):
        raise BadRequestError("name one of user or team")
    return f"user:{user}" if user is not None else f"team:{team}"


__all__ = ["NotFoundError", "OperatorData", "key_json", "subject_of"]
