"""Estimates, usage on one footing across providers, cost, and the usage_update line."""

from __future__ import annotations

import json

import pytest

from tests.acp_check import validator
from toolwire.config.schema import PriceTable
from toolwire.context import ContextMeter, estimate_request, estimate_text, window_for
from toolwire.context.meter import prompt_tokens, response_cost
from toolwire.events import Usage
from toolwire.history import ToolSpec, user


def test_an_estimate_is_on_the_safe_side_of_real_tokenizers() -> None:
    text = "def parse_config(path: str) -> dict[str, object]:\n    return {}\n" * 100
    # Tokenizers give 3.5 to 4.5 bytes per token for code; three errs high.
    assert len(text) / 4.5 < estimate_text(text)
    assert estimate_text(text) >= len(text) / 3
    assert estimate_text("é" * 300) == 200  # UTF-8 bytes, not characters


def test_a_request_counts_system_tools_and_messages() -> None:
    tool = ToolSpec("Read", "Read a file", {"type": "object"})
    bare = estimate_request("", [user("hi")])
    assert estimate_request("x" * 300, [user("hi")], [tool]) > bare + 100


def test_anthropic_counts_cache_apart_the_others_do_not() -> None:
    usage = Usage(input_tokens=100, output_tokens=5, cache_read_tokens=900, cache_write_tokens=50)
    assert prompt_tokens(usage, "anthropic") == 1050
    assert prompt_tokens(Usage(input_tokens=1000, cache_read_tokens=900), "openai-chat") == 1000


def test_cost_charges_cached_tokens_once_at_their_price() -> None:
    price = PriceTable(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(input_tokens=1_000, output_tokens=1_000, cache_read_tokens=10_000)
    assert response_cost(usage, "anthropic", price) == pytest.approx(
        (1_000 * 3.0 + 10_000 * 0.3 + 1_000 * 15.0) / 1e6
    )
    openai = Usage(input_tokens=11_000, output_tokens=1_000, cache_read_tokens=10_000)
    assert response_cost(openai, "openai-chat", price) == pytest.approx(
        response_cost(usage, "anthropic", price)
    )


def test_the_provider_count_corrects_later_estimates_within_a_band() -> None:
    meter = ContextMeter(window_for("x", context_window=24_000))
    meter.observe(1_000, Usage(input_tokens=800, output_tokens=50), "anthropic")
    assert meter.ratio == pytest.approx(0.8)
    assert meter.estimate(2_000) == 1_600
    assert meter.used == 850
    meter.observe(1_000, Usage(input_tokens=1, output_tokens=1), "anthropic")
    assert meter.ratio == 0.25  # one odd answer cannot make the agent never compact


def test_a_refusal_raises_the_ratio_to_what_the_provider_counted() -> None:
    meter = ContextMeter(window_for("x", context_window=24_000))
    meter.refused(20_000, 25_000)
    assert meter.ratio == pytest.approx(1.25)
    meter.refused(20_000, None)
    assert meter.ratio > 1.25
    assert meter.window.size == 24_000


def test_a_smaller_window_in_the_providers_error_is_believed() -> None:
    meter = ContextMeter(window_for("claude-sonnet-4"))
    meter.refused(100_000, 130_000, 128_000)
    assert (meter.window.size, meter.window.source) == (128_000, "the provider's error")
    meter.refused(100_000, 130_000, 500_000)  # a larger one is not
    assert meter.window.size == 128_000


def test_usage_update_is_valid_acp_with_and_without_cost() -> None:
    def validate(params: object) -> None:
        errors = list(validator().iter_errors(params))
        assert not errors, errors[0].message

    meter = ContextMeter(window_for("x", context_window=24_000))
    meter.observe(100, Usage(input_tokens=120, output_tokens=30), "anthropic")
    plain = meter.update()
    assert plain == {"sessionUpdate": "usage_update", "used": 150, "size": 24_000}
    validate({"sessionId": "s", "update": plain})
    price = PriceTable(input=1.0, output=2.0, currency="EUR")
    meter.observe(100, Usage(input_tokens=1_000_000, output_tokens=0), "anthropic", price)
    priced = meter.update()
    assert priced["cost"] == {"amount": 1.0, "currency": "EUR"}
    validate(json.loads(json.dumps({"sessionId": "s", "update": priced})))
