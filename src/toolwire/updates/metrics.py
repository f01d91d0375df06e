"""Metrics of the update engine, per session and per tool call.

What shows the engine's savings: notifications and bytes sent, the bytes a naive
stream would have sent (every tool-call update carrying the full tool call), and the time
spent on change detection. Counters are plain mutable slots (updated on the hot path);
``snapshot()`` gives frozen copies for callers.

``naive_bytes`` of a tool-call notification is the size of the same notification had it
carried every field of the call (what the ``full`` profile sends); for a text chunk it
equals the bytes sent. The saving therefore shows the field-level minimality alone;
coalescing shows in ``changes`` (updates asked for) against ``notifications``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """Counters at one moment (for a session or a single tool call)."""

    notifications: int
    bytes_sent: int
    naive_bytes: int
    changes: int
    detect_ns: int

    @property
    def saved_ratio(self) -> float:
        """Fraction of the naive bytes not sent (0.0 when nothing was sent)."""
        if not self.naive_bytes:
            return 0.0
        return 1.0 - self.bytes_sent / self.naive_bytes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, ``saved_ratio`` rounded to 4 places."""
        return {
            "notifications": self.notifications,
            "bytes_sent": self.bytes_sent,
            "naive_bytes": self.naive_bytes,
            "saved_ratio": round(self.saved_ratio, 4),
            "changes": self.changes,
            "detect_us": round(self.detect_ns / 1000, 1),
        }


@dataclass(slots=True)
class Counters:
    """Mutable counters; the engine adds to them as it emits. ``parent`` gets them too."""

    notifications: int = 0
    bytes_sent: int = 0
    naive_bytes: int = 0
    changes: int = 0
    detect_ns: int = 0
    parent: Counters | None = None

    def sent(self, size: int, naive: int) -> None:
        """Count one notification of ``size`` bytes (``naive`` as a full object)."""
        self.notifications += 1
        self.bytes_sent += size
        self.naive_bytes += naive
        if self.parent is not None:
            self.parent.sent(size, naive)

    def changed(self) -> None:
        """Count one change reported to the engine (coalesced changes count each)."""
        self.changes += 1
        if self.parent is not None:
            self.parent.changed()

    def detected(self, ns: int) -> None:
        """Add time spent on change detection."""
        self.detect_ns += ns
        if self.parent is not None:
            self.parent.detected(ns)

    def snapshot(self) -> MetricsSnapshot:
        """A frozen copy."""
        return MetricsSnapshot(
            self.notifications, self.bytes_sent, self.naive_bytes, self.changes, self.detect_ns
        )


@dataclass(slots=True)
class SessionCounters:
    """The session's totals and one ``Counters`` per tool call, by ``toolCallId``."""

    total: Counters = field(default_factory=Counters)
    calls: dict[str, Counters] = field(default_factory=dict)

    def call(self, tool_call_id: str) -> Counters:
        """The counters of one call, created on first use."""
        counters = self.calls.get(tool_call_id)
        if counters is None:
            counters = self.calls[tool_call_id] = Counters(parent=self.total)
        return counters

    def snapshot(self) -> SessionMetrics:
        """A frozen copy of everything."""
        return SessionMetrics(
            self.total.snapshot(), {k: v.snapshot() for k, v in self.calls.items()}
        )


@dataclass(frozen=True, slots=True)
class SessionMetrics:
    """Totals for a session and per tool call."""

    total: MetricsSnapshot
    calls: dict[str, MetricsSnapshot]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"session": {...}, "tool_calls": {id: {...}}}``."""
        return {
            "session": self.total.to_dict(),
            "tool_calls": {k: v.to_dict() for k, v in self.calls.items()},
        }

    def table(self) -> str:
        """A plain-text table, one row per call and a total row (for ``--stats``)."""
        head = f"{'':<34} {'notifs':>7} {'sent B':>10} {'naive B':>10} {'saved':>6} {'detect':>9}"
        rows = [head]
        for name, m in [*self.calls.items(), ("session total", self.total)]:
            rows.append(
                f"{name[:34]:<34} {m.notifications:>7} {m.bytes_sent:>10} {m.naive_bytes:>10}"
                f" {m.saved_ratio:>6.1%} {m.detect_ns / 1000:>7.1f}us"
            )
        return "\n".join(rows)


__all__ = ["Counters", "MetricsSnapshot", "SessionCounters", "SessionMetrics"]
