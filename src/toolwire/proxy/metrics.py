"""``GET /metrics``: counters, gauges and latency histograms through ``prometheus_client``.

Each ``Metrics`` has a registry of its own (several proxies in one process, as tests
make, count apart). With ``PROMETHEUS_MULTIPROC_DIR`` set before the proxy starts,
``prometheus_client`` keeps every counter and histogram in files there, and a scrape of
any process sharing the directory returns the sum over all of them (several ``toolwire
proxy serve`` processes, or workers, on one host); the ledger gauges are the scraped
process's own. Counters are declared with their label names here (``_DECLARED``); the
histograms (``LATENCIES``) are per backend and client dialect.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

disable_created_metrics()  # type: ignore[no-untyped-call]  # no ``*_created`` series beside every counter

_C = "counter"
_DECLARED: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "toolwire_proxy_requests_total": (_C, "Messages requests, by route and backend.",
                                      ("backend", "route")),
    "toolwire_proxy_streams_total": (_C, "Streamed responses started.", ()),
    "toolwire_proxy_bytes_total": (_C, "Response body bytes sent to clients.", ()),
    "toolwire_proxy_errors_total": (_C, "Errors answered, by kind.", ("kind",)),
    "toolwire_proxy_switches_total": (_C, "Backend switches within a session.", ()),
    "toolwire_proxy_thinking_stripped_total": (_C, "Thinking blocks of passed-through turns "
        "not sent to a backend that did not produce them.", ()),
    "toolwire_proxy_thinking_param_dropped_total": (_C, "Pass-through requests whose "
        "thinking parameter was dropped (a tool loop's turn had lost its thinking).", ()),
    "toolwire_proxy_compactions_total": (_C, "Histories the proxy compacted to fit a "
        "backend's window, by backend.", ("backend",)),
    "toolwire_proxy_compacted_requests_total": (_C, "Requests sent with a compacted history "
        "(a compaction's later requests too).", ()),
    "toolwire_proxy_overflow_retries_total": (_C, "Requests an upstream refused as too long, "
        "compacted and sent once more, by backend.", ("backend",)),
    "toolwire_proxy_failovers_total": (_C, "Requests sent on to the next backend after this "
        "one failed before the first byte, by the backend that failed.", ("backend",)),
    "toolwire_proxy_cooldowns_total": (_C, "Cooldowns started (a backend failed before the "
        "first byte), by backend.", ("backend",)),
    "toolwire_proxy_cooldown_skips_total": (_C, "Requests that skipped a backend because it "
        "was cooling down, by backend.", ("backend",)),
    "toolwire_proxy_key_cooldowns_total": (_C, "Pool keys that answered 429 and cooled down, "
        "by backend and key variable name.", ("backend", "key")),
    "toolwire_proxy_rate_limited_total": (_C, "Requests refused by [proxy.limits].", ()),
    "toolwire_proxy_team_tokens_total": (_C, "Tokens the upstreams reported, by team (empty: "
        "no key) and kind (input, output, cache_read, cache_write).", ("kind", "team")),
    "toolwire_proxy_team_cost_usd_total": (_C, "Dollars spent at the backends' "
        "price_per_mtok, by team (empty: no key).", ("team",)),
}  # fmt: skip
GAUGES = {
    "toolwire_proxy_ledger_backlog_rows": "Ledger rows waiting to be written (the database "
    "is down or behind), spooled included.",
    "toolwire_proxy_ledger_spooled_rows": "Ledger rows waiting in this process's spool files "
    "(past ledger_memory_rows).",
    "toolwire_proxy_ledger_rejected_rows": "Ledger rows the database refused on their own, "
    "kept in the spool's rejected.jsonl (since this process started).",
}
LATENCIES = {
    "toolwire_proxy_time_to_first_byte_seconds": "Seconds from a request's arrival to its "
    "response's start, by backend and client dialect.",
    "toolwire_proxy_upstream_latency_seconds": "Seconds from sending upstream to its first "
    "event, by backend and client dialect.",
    "toolwire_proxy_added_latency_seconds": "Time to first byte minus the upstream's: what "
    "the proxy itself added, by backend and client dialect.",
}
# From a millisecond (the proxy's own work) to a minute (a slow model's first token).
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"


class _Watched(Collector):
    """The gauges whose values are read when ``/metrics`` is asked."""

    def __init__(self) -> None:
        self.reads: dict[str, Callable[[], float]] = {}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for name, help_text in GAUGES.items():
            read = self.reads.get(name)
            yield GaugeMetricFamily(name, help_text, value=float(read()) if read else 0.0)


class Metrics:
    """The proxy's metrics; ``render()`` is the /metrics body."""

    def __init__(self) -> None:
        self._registry = CollectorRegistry(auto_describe=True)
        self._multiprocess = bool(os.environ.get(MULTIPROCESS))
        self._watched = _Watched()
        self._registry.register(self._watched)
        self._metrics: dict[str, Any] = {}
        self._children: dict[tuple[Any, ...], Any] = {}
        for name, (_, help_text, labels) in _DECLARED.items():
            self._metrics[name] = Counter(name, help_text, labels, registry=self._registry)
        for name, help_text in LATENCIES.items():
            self._metrics[name] = Histogram(name, help_text, ("backend", "dialect"),
                                            registry=self._registry, buckets=BUCKETS)  # fmt: skip

    def watch(self, name: str, read: Callable[[], float]) -> None:
        """Render the gauge ``name`` as what ``read`` returns when /metrics is asked."""
        if name not in GAUGES:
            raise KeyError(name)
        self._watched.reads[name] = read

    def add(self, name: str, value: float = 1.0, **labels: str) -> None:
        """Add ``value`` to the counter ``name`` with ``labels``."""
        (self._child(name, labels) if labels else self._metrics[name]).inc(value)

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        """One observation of the latency histogram ``name``."""
        if name not in LATENCIES:
            raise KeyError(name)
        self._child(name, labels).observe(max(0.0, seconds))

    def _child(self, name: str, labels: dict[str, str]) -> Any:
        """The series of ``name`` with ``labels``: looked up once per set of labels, as
        every request counts into the same few (``labels()`` checks and locks each time)."""
        key = (name, *labels.items())
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self._metrics[name].labels(**labels)
        return child

    def value(self, name: str, **labels: str) -> float:
        """The counter's current value in this process (0 when never set)."""
        sample = name if name.endswith("_total") else name + "_total"
        found = self._registry.get_sample_value(sample, labels)
        return 0.0 if found is None else found

    def render(self) -> str:
        """The Prometheus text format; every process's counters in multiprocess mode."""
        if not self._multiprocess:
            return generate_latest(self._registry).decode()
        shared = CollectorRegistry()
        MultiProcessCollector(shared)  # type: ignore[no-untyped-call]
        shared.register(self._watched)
        return generate_latest(shared).decode()


__all__ = ["BUCKETS", "GAUGES", "LATENCIES", "Metrics"]
