"""``/metrics`` as Prometheus reads it (``prometheus_client``): latency histograms per
backend and dialect, and, with ``PROMETHEUS_MULTIPROC_DIR``, the sum over every proxy
process sharing the directory."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.fakes.http import FakeServer
from tests.proxy.people_support import answering, priced_config, proxied, replicas
from tests.proxy.support import request_body

USAGE = {"input_tokens": 10}


def _post(url: str) -> None:
    body = request_body([{"role": "user", "content": "hi"}], max_tokens=50)
    assert httpx2.post(f"{url}/v1/messages", json=body, timeout=10).status_code == 200


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, parsed as Prometheus would (it fails on a bad one)."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_latency_histograms_per_backend_and_dialect(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, 5, delay=0.05)) as (url, _, _up):
        for _ in range(3):
            _post(url)
        found = _samples(httpx2.get(f"{url}/metrics", timeout=10).text)
    labels = (("backend", "claude"), ("dialect", "anthropic"))
    names = ("time_to_first_byte", "upstream_latency", "added_latency")
    counts = [found[(f"toolwire_proxy_{n}_seconds_count", labels)] for n in names]
    assert counts == [3.0, 3.0, 3.0]
    first, upstream, added = (found[(f"toolwire_proxy_{n}_seconds_sum", labels)] for n in names)
    assert 0 < upstream <= first
    assert added == pytest.approx(first - upstream, abs=0.003)
    assert (
        found[("toolwire_proxy_time_to_first_byte_seconds_bucket", (*labels, ("le", "+Inf")))] == 3
    )


@pytest.mark.e2e
def test_two_processes_sharing_a_directory_are_summed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(shared))
    with FakeServer(respond=answering(USAGE, 5)) as upstream:
        config = priced_config(tmp_path, upstream.url)
        with replicas(config, 2) as (a, b):
            for url in (a, a, b, b, b):
                _post(url)
            scrapes = [httpx2.get(f"{u}/metrics", timeout=10).text for u in (a, b)]
    for text in scrapes:
        found = _samples(text)
        labels = (("backend", "claude"), ("route", "default"))
        assert found[("toolwire_proxy_requests_total", labels)] == 5
        hist = (("backend", "claude"), ("dialect", "anthropic"))
        assert found[("toolwire_proxy_time_to_first_byte_seconds_count", hist)] == 5
