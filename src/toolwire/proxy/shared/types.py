"""The values the shared state holds (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Charge:
    """``amount`` added to counter ``counter`` (a name; the window is appended), which
    may hold at most ``limit`` per window."""

    counter: str
    limit: int
    amount: int


@dataclass(frozen=True, slots=True)
class Cooling:
    """A cooldown: skipped until ``until`` (wall-clock seconds); ``streak``: failures in
    a row (each doubles the next cooldown)."""

    until: float
    streak: int

    def to_text(self) -> str:
        return f"{self.until!r} {self.streak}"

    @classmethod
    def from_text(cls, text: str) -> Cooling:
        until, streak = text.split()
        return cls(float(until), int(streak))


__all__ = ["Charge", "Cooling"]
