"""``[proxy.aliases]`` (what Claude Code's model picker lists) and ``[[proxy.routes]]``
(rules choosing a backend from what a request asks for): docs/proxy.md, "Aliases and
routing rules"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    anthropic_text_stream,
    openai_text_stream,
    request_body,
    running,
    write_config,
)
from toolwire.config.schema import ConfigError
from toolwire.proxy import load_settings
from toolwire.proxy.routing import route
from toolwire.proxy.rules import Rule, choose
from toolwire.proxy.state import SessionState

ALIASES = '[proxy.aliases]\n"claude-qwen-big" = "local,qwen3-big"\n"Anthropic-Up" = "claude"\n'
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}


def _body(**extra: Any) -> dict[str, Any]:
    return request_body([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], **extra)


def _with_image_in_tool_result() -> dict[str, Any]:
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [IMAGE]}
    return request_body([{"role": "user", "content": [result]}])


@pytest.mark.parametrize(
    ("rule", "meets", "misses"),
    [
        (Rule("b", thinking=True), _body(thinking={"type": "enabled", "budget_tokens": 2048}),
         _body(thinking={"type": "disabled"})),
        (Rule("b", thinking=True), _body(thinking={"type": "adaptive"}), _body()),
        (Rule("b", background=True), _body(model="claude-haiku-4-5-20251001"), _body()),
        (Rule("b", background=False), _body(), _body(model="claude-3-5-Haiku-latest")),
        (Rule("b", image=True), _with_image_in_tool_result(), _body()),
        (Rule("b", web_search=True), _body(tools=[WEB_SEARCH]), _body()),
        (Rule("b", long_context=2000), _body(system="x " * 5000), _body()),
    ],
)  # fmt: skip
def test_each_rule_kind_holds_for_its_request_only(
    rule: Rule, meets: dict[str, Any], misses: dict[str, Any]
) -> None:
    assert choose([rule], meets, {}) == rule
    assert choose([rule], misses, {}) is None


def test_header_rules_match_the_name_in_any_case_and_the_exact_value() -> None:
    any_value, exact = Rule("a", header="X-Route"), Rule("b", header="x-route", value="cheap")
    assert choose([exact, any_value], _body(), {"x-route": "cheap"}) == exact
    assert choose([exact, any_value], _body(), {"x-route": "dear"}) == any_value
    assert choose([exact, any_value], _body(), {"x-other": "cheap"}) is None


def test_the_first_rule_that_holds_wins_and_every_condition_must_hold() -> None:
    both = Rule("both", thinking=True, web_search=True)
    thinking, searching = Rule("thinking", thinking=True), Rule("search", web_search=True)
    rules = [both, thinking, searching]
    asks = {"type": "enabled", "budget_tokens": 1024}
    assert choose(rules, _body(thinking=asks, tools=[WEB_SEARCH]), {}) == both
    assert choose(rules, _body(thinking=asks), {}) == thinking
    assert choose(rules, _body(tools=[WEB_SEARCH]), {}) == searching
    assert choose([searching, both], _body(thinking=asks, tools=[WEB_SEARCH]), {}) == searching


def test_aliases_and_rules_in_the_routing_order(tmp_path: Path) -> None:
    rules = '[[proxy.routes]]\nthinking = true\nbackend = "claude"\nmodel = "claude-think"\n'
    models = '[proxy.models]\n"claude-opus-5-5" = "local,qwen3-mapped"\n'
    settings = load_settings(
        write_config(tmp_path, "http://a", "http://b", ALIASES + rules + models)
    )
    fresh, forced = SessionState(), SessionState(forced="claude")
    thinking = _body(thinking={"type": "enabled", "budget_tokens": 1024})

    def pick(requested: str, state: SessionState, body: dict[str, Any]) -> tuple[str, str, str]:
        chosen = route(requested, state, settings, body=body, headers={})
        return chosen.backend, chosen.model, chosen.reason

    # An alias is the user's pick in the model picker: it wins over a switch and the rules.
    assert pick("claude-qwen-big", forced, thinking) == ("local", "qwen3-big", "alias")
    assert pick("Anthropic-Up", fresh, _body()) == ("claude", "claude-up", "alias")
    assert pick("claude-opus-5-5", fresh, thinking) == ("claude", "claude-think", "rule")
    assert pick("claude-opus-5-5", fresh, _body()) == ("local", "qwen3-mapped", "mapped")
    assert pick("claude-opus-5-5", forced, thinking)[2] == "switched"
    assert pick("local,qwen3", fresh, thinking) == ("local", "qwen3", "explicit")


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ('[proxy.aliases]\n"glm-4.6" = "local"\n', "must start with 'claude' or 'anthropic'"),
        ('[proxy.aliases]\n"claude-x" = "nowhere,m"\n', "'nowhere' is not a backend"),
        ('[[proxy.routes]]\nbackend = "claude"\n', "proxy.routes[0]: no condition"),
        ('[[proxy.routes]]\nimage = true\nbackend = "gone"\n', "'gone' is not a backend"),
        ('[[proxy.routes]]\nimage = "yes"\nbackend = "claude"\n', "image"),
    ],
)
def test_bad_aliases_and_rules_are_config_errors(tmp_path: Path, extra: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says.replace("[", r"\[")):
        load_settings(write_config(tmp_path, "http://a", "http://b", extra))


def test_an_alias_reaches_its_backend_and_model_through_the_proxy(tmp_path: Path) -> None:
    with FakeServer() as upstream:
        upstream.script(Reply(chunks=openai_text_stream("from qwen")))
        settings = load_settings(write_config(tmp_path, upstream.url, upstream.url, ALIASES))
        with running(settings) as url:
            listed = httpx2.get(f"{url}/v1/models", timeout=10).json()["data"]
            reply = httpx2.post(
                f"{url}/v1/messages", json=_body(model="claude-qwen-big"), timeout=10
            )
    assert [m["id"] for m in listed][:2] == ["claude-qwen-big", "Anthropic-Up"]
    assert listed[0]["display_name"] == "qwen3-big (local)"
    assert reply.status_code == 200, reply.text
    assert reply.headers["x-toolwire-backend"] == "local"
    (sent,) = upstream.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.json()["model"] == "qwen3-big"


def test_a_rule_sends_a_web_search_request_to_its_backend(tmp_path: Path) -> None:
    rule = '[[proxy.routes]]\nweb_search = true\nbackend = "claude"\n'
    with FakeServer() as upstream:
        upstream.script(
            Reply(chunks=anthropic_text_stream("searched")),
            Reply(chunks=openai_text_stream("plain")),
        )
        settings = load_settings(write_config(tmp_path, upstream.url, upstream.url, rule))
        with running(settings) as url:
            searching = httpx2.post(
                f"{url}/v1/messages", json=_body(tools=[WEB_SEARCH]), timeout=10
            )
            plain = httpx2.post(f"{url}/v1/messages", json=_body(), timeout=10)
    assert (searching.status_code, plain.status_code) == (200, 200), searching.text + plain.text
    assert [r.path for r in upstream.requests] == ["/v1/messages", "/v1/chat/completions"]
    assert upstream.requests[0].json()["model"] == "claude-up"
