"""What an OpenAI-dialect or Anthropic client asks of the answer reaches every upstream:
a required or named tool call, stop sequences, a JSON output format; the official SDKs
read what comes back (a stop sequence's finish, a parsed JSON answer), and ``n`` above 1
is one clear 400."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from pydantic import BaseModel

from tests.fakes.http import FakeServer, Reply
from tests.proxy.dialect_support import MODELS, TOOLS, calls_reply, text_reply
from tests.proxy.dialect_support import openai_client as _client
from tests.proxy.support import anthropic_stream, openai_text_stream

FAMILIES = ["anthropic", "openai"]
RESPONSES_TOOLS: list[Any] = [{"type": "function", **dict(TOOLS[0]["function"])}]  # type: ignore[arg-type]
WRITE: Any = {"type": "function", "function": {"name": "Write"}}


class Weather(BaseModel):
    city: str
    days: int


def _sent(upstream: FakeServer) -> dict[str, Any]:
    body: dict[str, Any] = upstream.requests[-1].json()
    return body


def _system(body: dict[str, Any]) -> str:
    if "system" in body:
        return json.dumps(body["system"])
    return str(body["messages"][0]["content"])


# -- a required or named call ---------------------------------------------------------

CHOICES: list[tuple[Any, Any, Any]] = [
    ("required", {"type": "any"}, "required"),
    (
        {"type": "function", "function": {"name": "Read"}},
        {"type": "tool", "name": "Read"},
        {"type": "function", "function": {"name": "Read"}},
    ),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("choice", "as_anthropic", "as_chat"), CHOICES)
def test_chat_tool_choice_reaches_the_upstream(
    family: str, choice: Any, as_anthropic: Any, as_chat: Any, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(calls_reply(family))
    completion = _client(base_url).chat.completions.create(
        model=MODELS[family],
        messages=[{"role": "user", "content": "Read a.py"}],
        tools=TOOLS,  # type: ignore[arg-type]
        tool_choice=choice,
    )
    assert completion.choices[0].finish_reason == "tool_calls"
    sent = _sent(upstream)
    assert sent["tool_choice"] == (as_anthropic if family == "anthropic" else as_chat)
    assert [t.get("name") or t["function"]["name"] for t in sent["tools"]] == ["Read"]


@pytest.mark.parametrize("family", FAMILIES)
def test_responses_tool_choice_reaches_the_upstream(
    family: str, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(calls_reply(family), calls_reply(family))
    client = _client(base_url)
    choices: list[Any] = ["required", {"type": "function", "name": "Read"}]
    for choice in choices:
        client.responses.create(
            model=MODELS[family], input="Read a.py", tools=RESPONSES_TOOLS, tool_choice=choice
        )
    required, named = (r.json()["tool_choice"] for r in upstream.requests)
    if family == "anthropic":
        assert (required, named) == ({"type": "any"}, {"type": "tool", "name": "Read"})
    else:
        assert (required, named) == ("required", {"type": "function", "function": {"name": "Read"}})


def test_an_anthropic_clients_tool_choice_and_stops_reach_an_openai_upstream(
    upstream: FakeServer, base_url: str
) -> None:
    upstream.script(Reply(chunks=openai_text_stream("ok")))
    client = anthropic.Anthropic(base_url=base_url.removesuffix("/v1"), api_key="k", max_retries=0)
    tool: Any = {"name": "Read", "description": "Read a file.", "input_schema": {"type": "object"}}
    try:
        client.messages.create(
            model=MODELS["openai"],
            max_tokens=100,
            messages=[{"role": "user", "content": "Read a.py"}],
            tools=[tool],
            tool_choice={"type": "tool", "name": "Read"},
            stop_sequences=["END"],
        )
    finally:
        client.close()
    sent = _sent(upstream)
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "Read"}}
    assert sent["stop"] == ["END"]


def test_a_named_tool_not_offered_is_one_clear_400(base_url: str) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        _client(base_url).chat.completions.create(
            model=MODELS["openai"],
            messages=[{"role": "user", "content": "hi"}],
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice=WRITE,
        )
    assert refused.value.status_code == 400
    assert "'Write' is not among the tools offered (Read)" in refused.value.message


# -- stop sequences and the stop they cause --------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("stop", ["END", ["END", "###"]])
def test_chat_stop_reaches_the_upstream(
    family: str, stop: Any, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(text_reply(family, "partial"))
    _client(base_url).chat.completions.create(
        model=MODELS[family], messages=[{"role": "user", "content": "count"}], stop=stop
    )
    want = [stop] if isinstance(stop, str) else stop
    assert _sent(upstream)["stop_sequences" if family == "anthropic" else "stop"] == want


def test_a_stop_sequence_ends_the_answer_as_chats_stop(upstream: FakeServer, base_url: str) -> None:
    stopped = Reply(chunks=anthropic_stream([{"type": "text", "text": "1 2 3"}], "stop_sequence"))
    upstream.script(stopped, stopped)
    client = _client(base_url)
    ask: Any = {"model": MODELS["anthropic"], "messages": [{"role": "user", "content": "count"}]}
    whole = client.chat.completions.create(**ask, stop="4")
    chunks = list(client.chat.completions.create(**ask, stop="4", stream=True))
    assert whole.choices[0].finish_reason == "stop"
    assert whole.choices[0].message.content == "1 2 3"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


# -- JSON output ------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_chat_json_schema_output_reaches_the_upstream_and_parses(
    family: str, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(text_reply(family, '{"city": "Oslo", "days": 3}'))
    completion = _client(base_url).chat.completions.parse(
        model=MODELS[family],
        messages=[{"role": "user", "content": "Weather in Oslo"}],
        response_format=Weather,
    )
    assert completion.choices[0].message.parsed == Weather(city="Oslo", days=3)
    sent = _sent(upstream)
    if family == "anthropic":  # no field on this wire: the system prompt asks for it
        assert "JSON Schema" in _system(sent)
        assert "days" in _system(sent)
    else:
        spec = sent["response_format"]["json_schema"]
        assert sent["response_format"]["type"] == "json_schema"
        assert (spec["name"], spec["strict"]) == ("Weather", True)
        assert set(spec["schema"]["properties"]) == {"city", "days"}


def test_chat_json_object_output_reaches_the_upstream(upstream: FakeServer, base_url: str) -> None:
    upstream.script(text_reply("openai", "{}"))
    _client(base_url).chat.completions.create(
        model=MODELS["openai"],
        messages=[{"role": "user", "content": "JSON please"}],
        response_format={"type": "json_object"},
    )
    assert _sent(upstream)["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize("family", FAMILIES)
def test_responses_text_format_reaches_the_upstream_and_parses(
    family: str, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(text_reply(family, '{"city": "Oslo", "days": 3}'))
    response = _client(base_url).responses.parse(
        model=MODELS[family], input="Weather in Oslo", text_format=Weather
    )
    assert response.output_parsed == Weather(city="Oslo", days=3)
    sent = _sent(upstream)
    if family == "anthropic":
        assert "JSON Schema" in _system(sent)
    else:
        assert sent["response_format"]["type"] == "json_schema"
        assert sent["response_format"]["json_schema"]["name"] == "Weather"


# -- several choices ---------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [True, False])
def test_n_above_one_is_one_clear_400(streamed: bool, upstream: FakeServer, base_url: str) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        _client(base_url).chat.completions.create(
            model=MODELS["openai"],
            messages=[{"role": "user", "content": "hi"}],
            n=2,
            stream=streamed,
        )
    assert refused.value.status_code == 400
    assert refused.value.param == "n"
    assert "one choice per request" in refused.value.message
    assert upstream.requests == []


def test_a_forced_server_tool_the_backend_cannot_run_is_left_to_the_model(
    upstream: FakeServer, base_url: str
) -> None:
    """Anthropic's ``web_search`` is left out for another backend (no search configured);
    a ``tool_choice`` naming it is then no refusal: the model chooses."""
    upstream.script(Reply(chunks=openai_text_stream("ok")))
    client = anthropic.Anthropic(base_url=base_url.removesuffix("/v1"), api_key="k", max_retries=0)
    search: Any = {"type": "web_search_20250305", "name": "web_search"}
    try:
        reply = client.messages.create(
            model=MODELS["openai"],
            max_tokens=100,
            messages=[{"role": "user", "content": "news?"}],
            tools=[search],
            tool_choice={"type": "tool", "name": "web_search"},
        )
    finally:
        client.close()
    assert reply.content[0].text == "ok"  # type: ignore[union-attr]
    assert "tool_choice" not in _sent(upstream)
