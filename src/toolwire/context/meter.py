"""How full a session's context is, and what it has cost: the numbers of ``usage_update``.

Providers count differently: some leave the tokens read from or written to their prompt
cache out of ``input_tokens`` (Anthropic), others include them (OpenAI, Gemini); each
profile says which (``ProviderProfile.usage_includes_cache``). ``prompt_tokens`` puts
them on one footing (everything the model read) so that ``used`` means the same on every
backend, and the cost charges cached tokens once, at their own price.

The estimate of the next request (``tokens.estimate_request``) is corrected here: the
ratio of what the provider counted to what was estimated for the same request scales
every later estimate, kept within a sane band so one odd answer cannot make the agent
compact at every step or never.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from toolwire.config.choices import WireFormat
from toolwire.context.windows import Window
from toolwire.events import Usage
from toolwire.providers import profile
from toolwire.updates.builders import UsageUpdate, usage_update

RATIO_BAND = (0.25, 2.0)


class Price(Protocol):
    """Prices per million tokens (``config.schema.PriceTable``)."""

    @property
    def input(self) -> float: ...
    @property
    def output(self) -> float: ...
    @property
    def cache_read(self) -> float | None: ...
    @property
    def cache_write(self) -> float | None: ...
    @property
    def currency(self) -> str: ...


def prompt_tokens(usage: Usage, wire_format: WireFormat) -> int:
    """All input tokens of a response: cache reads and writes included, on every provider
    (its profile says whether its input count already holds them)."""
    base = usage.input_tokens or 0
    known = profile(wire_format)
    if known is not None and not known.usage_includes_cache:
        return base + (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)
    return base


def response_cost(usage: Usage, wire_format: WireFormat, price: Price) -> float:
    """What one response cost: uncached input, cache reads and writes, output."""
    read = usage.cache_read_tokens or 0
    write = usage.cache_write_tokens or 0
    fresh = max(0, prompt_tokens(usage, wire_format) - read - write)
    read_price = price.input if price.cache_read is None else price.cache_read
    write_price = price.input if price.cache_write is None else price.cache_write
    total = (
        fresh * price.input
        + read * read_price
        + write * write_price
        + (usage.output_tokens or 0) * price.output
    )
    return total / 1_000_000


@dataclass(slots=True)
class ContextMeter:
    """One session's context: its window, tokens in use, estimate correction and cost."""

    window: Window
    owner: str = ""
    """The backend this meter measures (a switch makes a new meter)."""
    used: int = 0
    """Tokens in context after the last response (its input and its output)."""
    ratio: float = 1.0
    """Provider's count over our estimate, from the last response that reported usage."""
    cost: float = 0.0
    currency: str | None = None

    def estimate(self, raw: int) -> int:
        """A raw estimate (``tokens.estimate_request``) corrected by what was learned."""
        return int(raw * self.ratio + 0.5)

    def limit(self, threshold: float) -> int:
        """The most a request may hold before it is compacted."""
        return int(threshold * self.window.room)

    def observe(
        self,
        estimated: int,
        usage: Usage | None,
        wire_format: WireFormat,
        price: Price | None = None,
    ) -> None:
        """Take a response's usage: ``estimated`` is the raw estimate of its request."""
        if usage is None or usage.input_tokens is None:
            return
        counted = prompt_tokens(usage, wire_format)
        if estimated > 0 and counted > 0:
            low, high = RATIO_BAND
            self.ratio = min(high, max(low, counted / estimated))
        self.used = counted + (usage.output_tokens or 0)
        if price is not None:
            self.cost += response_cost(usage, wire_format, price)
            self.currency = price.currency

    def refused(self, estimated: int, counted: int | None, limit: int | None = None) -> None:
        """A request estimated at ``estimated`` was refused as too long; ``counted`` is the
        provider's own count and ``limit`` its window, when its error said them. A window
        smaller than the configured one is believed from then on: the provider knows."""
        if limit is not None and 0 < limit < self.window.size:
            reserved = min(self.window.reserved, limit // 2)
            self.window = Window(limit, reserved, "the provider's error")
        if counted is not None and estimated > 0:
            self.ratio = min(RATIO_BAND[1], max(self.ratio, counted / estimated))
        else:  # it did not say: assume we were a quarter low
            self.ratio = min(RATIO_BAND[1], self.ratio * 1.25)

    def update(self) -> UsageUpdate:
        """The ``usage_update`` session update (ACP v1 ``UsageUpdate``)."""
        if self.currency is None:
            return usage_update(self.used, self.window.size)
        cost = {"amount": round(self.cost, 6), "currency": self.currency}
        return usage_update(self.used, self.window.size, cost)


__all__ = ["RATIO_BAND", "ContextMeter", "Price", "prompt_tokens", "response_cost"]
