"""People's keys and budgets: what ``toolwire proxy keys`` writes and the proxy reads.

A key is ``tw-`` and 43 random URL-safe characters (256 bits from ``secrets``). Only its
SHA-256 digest is stored: a slow password hash (bcrypt, scrypt) exists to make guessing a
low-entropy password expensive, and nobody guesses 256 random bits, so one fast digest
is as safe here and costs microseconds per request instead of tens of milliseconds.

A budget is ``AMOUNT/PERIOD`` (``50usd/30d``, ``5usd/1d``, ``0.5usd/12h``), kept per
subject (``user:NAME``, ``team:NAME``) in micro-dollars, with the time it was set: its
periods are fixed windows from then (a key's ``--budget`` from the key's creation), so
every replica computes the same window without a clock of its own.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import secrets
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from urllib.parse import quote

KEY_PREFIX = "tw-"
MICROS = 1_000_000  # a dollar in the counters' unit: integers add exactly, floats do not
_BUDGET = re.compile(r"(\d+(?:\.\d{1,6})?)\s*usd\s*/\s*(\d+)\s*([smhd])", re.IGNORECASE)
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def new_secret() -> str:
    """A fresh key, shown once to whoever creates it."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    """What the store keeps of a key (see the module doc for why SHA-256 is enough)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class Budget:
    """A spending limit over fixed windows of ``period`` seconds from ``start``."""

    limit: int
    """Micro-dollars per window."""
    period: int
    """Seconds."""
    start: float = 0.0
    """Unix time the first window opened."""

    def window(self, now: float) -> int:
        """The index of the window ``now`` falls in."""
        return int((now - self.start) // self.period)

    def resets(self, now: float) -> float:
        """Unix time the current window ends."""
        return self.start + (self.window(now) + 1) * self.period

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> Budget:
        data = json.loads(text)
        return cls(int(data["limit"]), int(data["period"]), float(data["start"]))


def parse_budget(text: str, start: float) -> Budget:
    """``50usd/30d`` as a ``Budget`` opening at ``start``; ``ValueError`` in plain words."""
    found = _BUDGET.fullmatch(text.strip())
    if found is None or int(found.group(2)) == 0:
        raise ValueError(f"budget {text!r}: write it as AMOUNT/PERIOD, e.g. 50usd/30d or 5usd/1d")
    amount, count, unit = found.groups()
    limit = round(float(amount) * MICROS)
    return Budget(limit, int(count) * _UNIT[unit.lower()], start)


_AGE = re.compile(r"(\d+)\s*([smhd])", re.IGNORECASE)


def parse_age(text: str) -> int:
    """``90d``, ``12h``, ``30m``, ``45s`` in seconds; ``ValueError`` in plain words."""
    found = _AGE.fullmatch(text.strip())
    if found is None or int(found.group(1)) == 0:
        raise ValueError(f"{text!r} is not an age such as 90d, 12h or 30m")
    return int(found.group(1)) * _UNIT[found.group(2).lower()]


def dollars(micros: float) -> str:
    """``$1.25`` (cents; fractions of a cent when that is all there is)."""
    value = micros / MICROS
    return f"${value:.2f}" if value >= 0.01 or value == 0 else f"${value:.6f}"


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """One person's key as stored: never the key itself."""

    id: str
    digest: str
    user: str
    team: str | None = None
    models: tuple[str, ...] = ()
    """Patterns (``fnmatch``) of the backends or models the key may use; empty: any."""
    created: float = 0.0
    revoked: bool = False
    budget: str | None = None
    """The ``--budget`` it was made with, as written (the budget itself is the user's)."""
    admin: bool = False
    """Made with ``keys add --admin``: may switch anyone's session and read ``/metrics``."""
    expires: float | None = None
    """Unix time from which the key is refused (``--expires``, or a rotation's grace)."""

    def to_json(self) -> str:
        data = asdict(self)
        data["models"] = list(self.models)
        # Absent when unset: a record reads the same in older versions.
        for name in ("admin", "expires"):
            if not data[name]:
                del data[name]
        return json.dumps(data)

    def usable(self, now: float) -> bool:
        """Neither revoked nor expired at ``now``."""
        return not self.revoked and (self.expires is None or now < self.expires)

    def state(self, now: float) -> str:
        """``active``, ``revoked`` or ``expired``, as ``keys list`` shows it."""
        if self.revoked:
            return "revoked"
        return "active" if self.usable(now) else "expired"

    @property
    def owner(self) -> str:
        """Whose sessions this key's requests reach (``owner_of``)."""
        return owner_of(self.user, self.team)

    @classmethod
    def from_json(cls, text: str | bytes) -> KeyRecord:
        data = json.loads(text)
        data["models"] = tuple(data.get("models") or ())
        return cls(**data)

    def allows(self, backend: str, model: str, named: Collection[str] = ()) -> bool:
        """Whether a request resolved to ``backend`` and ``model`` is this key's to make;
        ``named``: the models the config itself gives ``backend`` (see ``allowed``)."""
        return allowed(self.models, backend, model, named)


def owner_of(user: str, team: str | None) -> str:
    """A person as a session's owner: ``TEAM/USER``, each part percent-quoted (so the one
    ``/`` separates them, and the result is ASCII without a tab)."""
    return f"{quote(team or '', safe='')}/{quote(user, safe='')}"


def allowed(patterns: Sequence[str], backend: str, model: str, named: Collection[str] = ()) -> bool:
    """Any pattern matching the backend or ``backend,model`` (none: all). A pattern that
    matches only the model counts when the config names that model for this backend
    (``named``): a client writes any model after a comma (``dear,cheap``), and a model
    name it chose must not open a backend the key was not given."""
    if not patterns:
        return True
    names = [backend, f"{backend},{model}"] + ([model] if model in named else [])
    return any(fnmatch.fnmatchcase(n, p) for p in patterns for n in names)


@dataclass(frozen=True, slots=True)
class Charge:
    """``amount`` (micro-dollars, may be negative when settling) on ``counter``, which may
    hold at most ``limit``; the counter may be forgotten ``ttl`` seconds after."""

    counter: str
    limit: int
    amount: int
    ttl: int


@dataclass(frozen=True, slots=True)
class Refused:
    """The charge that did not fit, and what its counter held."""

    charge: Charge
    spent: int


def new_key_id() -> str:
    """A key's public name (for ``keys list`` and ``keys revoke``), unrelated to its secret."""
    return "key_" + secrets.token_hex(6)


__all__ = [
    "KEY_PREFIX",
    "MICROS",
    "Budget",
    "Charge",
    "KeyRecord",
    "Refused",
    "allowed",
    "digest",
    "dollars",
    "new_key_id",
    "new_secret",
    "owner_of",
    "parse_age",
    "parse_budget",
]
