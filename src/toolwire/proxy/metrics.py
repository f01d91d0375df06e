"""Counters for ``GET /metrics`` in the Prometheus text exposition format."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable

_HELP = {
    "toolwire_proxy_requests_total": ("counter", "Messages requests, by route and backend."),
    "toolwire_proxy_streams_total": ("counter", "Streamed responses started."),
    "toolwire_proxy_bytes_total": ("counter", "Response body bytes sent to clients."),
    "toolwire_proxy_errors_total": ("counter", "Errors answered, by kind."),
    "toolwire_proxy_switches_total": ("counter", "Backend switches within a session."),
    "toolwire_proxy_thinking_stripped_total": (
        "counter",
        "Thinking blocks of passed-through turns not sent to a backend that did not produce them.",
    ),
    "toolwire_proxy_thinking_param_dropped_total": (
        "counter",
        "Pass-through requests whose thinking parameter was dropped (a tool loop's turn "
        "had lost its thinking).",
    ),
    "toolwire_proxy_compactions_total": (
        "counter",
        "Histories the proxy compacted to fit a backend's window, by backend.",
    ),
    "toolwire_proxy_compacted_requests_total": (
        "counter",
        "Requests sent with a compacted history (a compaction's later requests too).",
    ),
    "toolwire_proxy_overflow_retries_total": (
        "counter",
        "Requests an upstream refused as too long, compacted and sent once more, by backend.",
    ),
    "toolwire_proxy_failovers_total": (
        "counter",
        "Requests sent on to the next backend after this one failed before the first byte, "
        "by the backend that failed.",
    ),
    "toolwire_proxy_cooldowns_total": (
        "counter",
        "Cooldowns started (a backend failed before the first byte), by backend.",
    ),
    "toolwire_proxy_cooldown_skips_total": (
        "counter",
        "Requests that skipped a backend because it was cooling down, by backend.",
    ),
    "toolwire_proxy_key_cooldowns_total": (
        "counter",
        "Pool keys that answered 429 and cooled down, by backend and key variable name.",
    ),
    "toolwire_proxy_rate_limited_total": (
        "counter",
        "Requests refused by [proxy.limits].",
    ),
    "toolwire_proxy_team_tokens_total": (
        "counter",
        "Tokens the upstreams reported, by team (empty: no key) and kind (input, output, "
        "cache_read, cache_write).",
    ),
    "toolwire_proxy_team_cost_usd_total": (
        "counter",
        "Dollars spent at the backends' price_per_mtok, by team (empty: no key).",
    ),
    "toolwire_proxy_ledger_backlog_rows": (
        "gauge",
        "Ledger rows waiting to be written (the database is down or behind), spooled included.",
    ),
    "toolwire_proxy_ledger_spooled_rows": (
        "gauge",
        "Ledger rows waiting in this process's spool files (past ledger_memory_rows).",
    ),
    "toolwire_proxy_ledger_rejected_rows": (
        "counter",
        "Ledger rows the database refused on their own, kept in the spool's rejected.jsonl.",
    ),
    "toolwire_proxy_upstream_latency_seconds_sum": (
        "counter",
        "Seconds from sending upstream to its first event, summed.",
    ),
    "toolwire_proxy_upstream_latency_seconds_count": (
        "counter",
        "Upstream requests whose latency was measured.",
    ),
}

Labels = tuple[tuple[str, str], ...]


class Metrics:
    """Thread-safe counters; ``render()`` is the /metrics body."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: defaultdict[tuple[str, Labels], float] = defaultdict(float)
        self._watched: dict[str, Callable[[], float]] = {}

    def watch(self, name: str, read: Callable[[], float]) -> None:
        """Render ``name`` (unlabelled) as what ``read`` returns when /metrics is asked."""
        if name not in _HELP:
            raise KeyError(name)
        self._watched[name] = read

    def add(self, name: str, value: float = 1.0, **labels: str) -> None:
        """Add ``value`` to the counter ``name`` with ``labels``."""
        if name not in _HELP:
            raise KeyError(name)
        # Called per relayed event (bytes sent): no sorting when there is nothing to sort.
        key = (name, tuple(sorted(labels.items())) if labels else ())
        with self._lock:
            self._values[key] += value

    def value(self, name: str, **labels: str) -> float:
        """The counter's current value (0 when never set)."""
        with self._lock:
            return self._values.get((name, tuple(sorted(labels.items()))), 0.0)

    def render(self) -> str:
        """The Prometheus text format: HELP and TYPE, then one line per labelled value."""
        with self._lock:
            values = dict(self._values)
        for name, read in list(self._watched.items()):
            values[(name, ())] = float(read())
        lines: list[str] = []
        for name, (kind, help_text) in _HELP.items():
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
            rows = sorted((labels, v) for (n, labels), v in values.items() if n == name)
            if not rows:
                lines.append(f"{name} 0")
            for labels, v in rows:
                lines.append(f"{name}{_labels(labels)} {v:g}")
        return "\n".join(lines) + "\n"


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    escaped = (
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in labels
    )
    return "{" + ",".join(escaped) + "}"


__all__ = ["Metrics"]
