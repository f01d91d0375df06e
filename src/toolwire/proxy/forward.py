"""What a pass-through sends (``passthrough.py``): the level a backend gets and the
client's body prepared for a plan's view (``plan.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.backends.anthropic import build_body as anthropic_body
from toolwire.config.choices import PassthroughLevel
from toolwire.proxy.passthrough import Prepared, default_level, prepare
from toolwire.proxy.provenance import turn_owner
from toolwire.proxy.rewrite import View
from toolwire.proxy.routing import Route
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.translate import raw_index, to_model_request


def passthrough_level(settings: ProxySettings, name: str) -> PassthroughLevel:
    """``full``, ``core`` or ``off`` for backend ``name`` (``off`` unless Anthropic)."""
    config = settings.config.backend(name)
    if config.provider != "anthropic" or not config.native_tools:
        return "off"
    return config.passthrough or default_level(config.base_url)


def passthrough_body(
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    chosen: Route,
    view: View,
    level: PassthroughLevel,
    produced: Mapping[str, str],
) -> Prepared:
    """The client's body prepared for an Anthropic backend (``passthrough.py``): the
    messages before the view's switch point rebuilt, the rest the client's own."""
    start = raw_index(body, view.start) if view.prefix else 0
    prefix_messages = view.prefix
    if start is None:  # the switch point is not a message boundary: send it all rebuilt
        prefix_messages, start = view.messages, len(body["messages"])
    prefix: list[dict[str, Any]] = []
    if prefix_messages:
        neutral = to_model_request(body, prefix_messages)
        prefix = anthropic_body(neutral, model=chosen.model, backend=chosen.backend)["messages"]
    return prepare(
        body,
        level=level,
        model=chosen.model,
        target=chosen.backend,
        owner=lambda content: turn_owner(content, produced),
        headers=headers,
        prefix=prefix,
        start=start,
    )


__all__ = ["passthrough_body", "passthrough_level"]
