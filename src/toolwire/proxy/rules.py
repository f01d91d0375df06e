"""``[[proxy.routes]]``: rules that choose a backend from what a request asks for.

A rule holds when every condition it sets holds; the first rule that holds wins::

    [[proxy.routes]]
    long_context = 60000     # estimated input tokens above this
    backend = "gemini"
    [[proxy.routes]]
    background = true        # Claude Code's small-model calls (a "haiku" model id)
    backend = "local"
    model = "qwen3-small"    # else the backend's own model

The other conditions: ``thinking`` (the request asks for extended thinking), ``image``
(a message holds an image), ``web_search`` (the request carries Anthropic's web search
server tool), and ``header`` with an optional ``value`` (the header is sent, with that
value). A condition set to ``false`` holds when the request does *not* have it.

``choose`` is a pure function of the request and the rules: no state, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import NonNegativeInt

from toolwire.config.schema import Table
from toolwire.context.tokens import estimate_wire

# Claude Code sends its background work (titles, topics, command prefixes) to its small
# fast model, a Haiku unless ANTHROPIC_DEFAULT_HAIKU_MODEL names another.
BACKGROUND_MARK = "haiku"
WEB_SEARCH_TYPE = "web_search_"  # web_search_20250305 and the versions after it


class RuleTable(Table):
    """One ``[[proxy.routes]]`` table as the file writes it."""

    backend: str
    model: str | None = None
    long_context: NonNegativeInt | None = None
    thinking: bool | None = None
    background: bool | None = None
    image: bool | None = None
    web_search: bool | None = None
    header: str | None = None
    value: str | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """A routing rule: ``backend`` (and ``model``, None: the backend's) when every set
    condition holds (None: not checked)."""

    backend: str
    model: str | None = None
    long_context: int | None = None
    thinking: bool | None = None
    background: bool | None = None
    image: bool | None = None
    web_search: bool | None = None
    header: str | None = None
    value: str | None = None

    @property
    def conditions(self) -> list[str]:
        """The names of the conditions this rule sets."""
        names = ("long_context", "thinking", "background", "image", "web_search", "header")
        return [n for n in names if getattr(self, n) is not None]


def rule_of(table: RuleTable) -> Rule:
    """The rule of a checked table."""
    return Rule(**table.model_dump())


def choose(
    rules: Iterable[Rule], body: Mapping[str, Any], headers: Mapping[str, str]
) -> Rule | None:
    """The first of ``rules`` that ``body`` (an Anthropic Messages request, checked) and
    its ``headers`` meet, or None."""
    tokens = _Lazy(lambda: estimate_wire(json.dumps(body, separators=(",", ":"))))
    for rule in rules:
        if _holds(rule, body, headers, tokens):
            return rule
    return None


class _Lazy:
    """The request's token estimate, made once and only when a rule asks for it (it
    reads the whole body, which can be megabytes)."""

    def __init__(self, make: Callable[[], int]) -> None:
        self._make = make
        self._value: int | None = None

    def __call__(self) -> int:
        if self._value is None:
            self._value = self._make()
        return self._value


def _holds(rule: Rule, body: Mapping[str, Any], headers: Mapping[str, str], tokens: _Lazy) -> bool:
    if not rule.conditions:
        return False  # refused at load (settings); never a catch-all by accident
    checks: list[tuple[bool | None, Callable[[], bool]]] = [
        (rule.thinking, lambda: asks_thinking(body)),
        (rule.background, lambda: is_background(body)),
        (rule.image, lambda: has_image(body)),
        (rule.web_search, lambda: has_web_search(body)),
    ]
    if any(want is not None and want != test() for want, test in checks):
        return False
    if rule.long_context is not None and tokens() <= rule.long_context:
        return False
    return rule.header is None or _header_holds(rule.header, rule.value, headers)


def _header_holds(name: str, value: str | None, headers: Mapping[str, str]) -> bool:
    # Starlette's headers are case-insensitive; a plain dict (tests, callers) may not be.
    sent = headers.get(name.lower()) or headers.get(name)
    if not sent:
        return False
    return value is None or sent.strip() == value


def asks_thinking(body: Mapping[str, Any]) -> bool:
    """The request asks for extended thinking (``enabled`` or ``adaptive``)."""
    thinking = body.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type", "disabled") != "disabled"


def is_background(body: Mapping[str, Any]) -> bool:
    """A small-model request: Claude Code's background calls name a Haiku."""
    return BACKGROUND_MARK in str(body.get("model", "")).lower()


def has_image(body: Mapping[str, Any]) -> bool:
    """A message holds an image block (also inside a tool result)."""
    return any(_images(m.get("content")) for m in body.get("messages", ()) if isinstance(m, dict))


def _images(content: Any) -> bool:
    if not isinstance(content, list):
        return False
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "image" or _images(block.get("content")):
            return True
    return False


def has_web_search(body: Mapping[str, Any]) -> bool:
    """The request carries Anthropic's web search server tool."""
    tools = body.get("tools") or ()
    return any(
        isinstance(t, dict) and str(t.get("type", "")).startswith(WEB_SEARCH_TYPE) for t in tools
    )


__all__ = [
    "Rule",
    "RuleTable",
    "asks_thinking",
    "choose",
    "has_image",
    "has_web_search",
    "is_background",
    "rule_of",
]
