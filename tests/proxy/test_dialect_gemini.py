"""The Gemini API dialect into the proxy, with the official ``google-genai`` SDK as the
oracle: it parses every answer (streamed and not: text, parallel calls, errors) over an
Anthropic, an OpenAI Chat and a Gemini upstream, and what it sends back (signatures,
function responses) reaches the upstream as that upstream's API wants it."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google.genai import errors, types

from tests.backends import gemini_rules
from tests.fakes.http import FakeServer, Reply, sse
from tests.proxy.gemini_support import (
    client,
    config_with,
    content,
    gemini_chunk,
    header,
    parts,
    settings,
    tool_round,
)
from tests.proxy.people_support import answering, priced_config, served, wait_for
from tests.proxy.support import anthropic_stream, openai_tool_stream, running
from toolwire.proxy import load_settings
from toolwire.proxy.people.accounts import issue

TWO_CALLS: list[dict[str, Any]] = [
    {"type": "text", "text": "Reading both."},
    {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.py"}},
    {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "b.py"}},
]


def test_a_text_answer_from_an_anthropic_upstream_streamed_and_not(tmp_path: Path) -> None:
    with FakeServer() as up:
        up.script(
            *(
                Reply(chunks=anthropic_stream([{"type": "text", "text": "Hello."}], "end_turn"))
                for _ in range(2)
            )
        )
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            chunks = list(sdk.models.generate_content_stream(model="claude", contents="Hi"))
            whole = sdk.models.generate_content(model="claude", contents="Hi")
    assert "".join(c.text or "" for c in chunks) == "Hello."
    last = chunks[-1]
    assert last.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    assert last.usage_metadata is not None
    assert last.usage_metadata.prompt_token_count == 10
    assert whole.text == "Hello."
    assert whole.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    assert whole.usage_metadata.candidates_token_count == 3  # type: ignore[union-attr]
    sent = up.requests[0].json()
    assert sent["model"] == "claude-up"
    assert sent["messages"][0]["content"][0]["text"] == "Hi"


def test_parallel_calls_each_arrive_whole_in_their_own_chunk(tmp_path: Path) -> None:
    with FakeServer() as up:
        up.script(*(Reply(chunks=anthropic_stream(TWO_CALLS, "tool_use")) for _ in range(2)))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            ask: dict[str, Any] = {"model": "claude", "contents": "Read", "config": config_with()}
            chunks = list(sdk.models.generate_content_stream(**ask))
            whole = sdk.models.generate_content(**ask)
    calls = [c.function_calls or [] for c in chunks]
    # Text first, then one chunk per call with its whole arguments, then the finish.
    assert [len(found) for found in calls] == [0, 1, 1, 0]
    assert [found[0].args for found in calls[1:3]] == [{"path": "a.py"}, {"path": "b.py"}]
    assert chunks[0].text == "Reading both."
    assert [(f.id, f.name, f.args) for f in whole.function_calls or []] == [
        ("toolu_a", "read_file", {"path": "a.py"}),
        ("toolu_b", "read_file", {"path": "b.py"}),
    ]
    assert whole.text == "Reading both."


def test_function_responses_go_back_paired_with_their_calls(tmp_path: Path) -> None:
    with FakeServer() as up:
        up.script(Reply(chunks=anthropic_stream(TWO_CALLS, "tool_use")))
        up.script(Reply(chunks=anthropic_stream([{"type": "text", "text": "Done."}], "end_turn")))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            first = sdk.models.generate_content(
                model="claude", contents="Read", config=config_with()
            )
            history = tool_round("Read", content(first), "A", "B")
            second = sdk.models.generate_content(
                model="claude", contents=history, config=config_with()
            )
    assert second.text == "Done."
    messages = up.requests[1].json()["messages"]
    uses = [b["id"] for b in messages[1]["content"] if b["type"] == "tool_use"]
    results_sent = [(b["tool_use_id"], b["content"]) for b in messages[2]["content"]]
    assert uses == ["toolu_a", "toolu_b"]
    assert [(i, _text(c)) for i, c in results_sent] == [("toolu_a", "A"), ("toolu_b", "B")]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def test_thought_signatures_go_back_to_the_gemini_upstream(tmp_path: Path) -> None:
    call = {"name": "read_file", "args": {"path": "a.py"}}
    signed: list[dict[str, Any]] = [
        {"functionCall": call, "thoughtSignature": "c2lnLWE="},
        {"functionCall": {"name": "read_file", "args": {"path": "b.py"}}},
    ]
    with FakeServer() as up:
        up.script(Reply(chunks=[gemini_chunk([{"text": "Both."}]), gemini_chunk(signed, "STOP")]))
        up.script(Reply(chunks=[gemini_chunk([{"text": "Done."}], "STOP")]))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            ask = {"model": "gem", "config": config_with()}
            chunks = list(sdk.models.generate_content_stream(contents="Read", **ask))  # type: ignore[arg-type]
            model_turn = types.Content(role="model", parts=parts(chunks))
            history = tool_round("Read", model_turn, "A", "B")
            second = sdk.models.generate_content(contents=history, **ask)  # type: ignore[arg-type]
    signatures = [p.thought_signature for p in parts(chunks) if p.function_call]
    assert signatures == [b"sig-a", None]
    assert second.text == "Done."
    body = up.requests[1].json()
    assert gemini_rules.request_violations(body) == []
    model_parts = body["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in model_parts if "functionCall" in p] == [
        "c2lnLWE=",
        None,
    ]
    # Gemini gave the calls no ids: none of the proxy's own go upstream.
    assert all("id" not in p["functionCall"] for p in model_parts if "functionCall" in p)
    responses = [p["functionResponse"] for p in body["contents"][2]["parts"]]
    assert [(r["name"], r["response"]) for r in responses] == [
        ("read_file", {"output": "A"}),
        ("read_file", {"output": "B"}),
    ]


def test_text_and_a_call_from_an_openai_chat_upstream(tmp_path: Path) -> None:
    with FakeServer() as up:
        up.script(Reply(chunks=openai_tool_stream()), Reply(chunks=openai_tool_stream()))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            ask: dict[str, Any] = {"model": "local", "contents": "Read", "config": config_with()}
            chunks = list(sdk.models.generate_content_stream(**ask))
            whole = sdk.models.generate_content(**ask)
    streamed = [f for c in chunks for f in c.function_calls or []]
    assert [(f.name, f.args) for f in streamed] == [
        ("Read", {"file_path": "src/a.py", "limit": 20})
    ]
    assert "".join(c.text or "" for c in chunks if not c.function_calls) == "Reading it."
    assert [(f.id, f.name) for f in whole.function_calls or []] == [("call_abc", "Read")]
    assert whole.usage_metadata.prompt_token_count == 50  # type: ignore[union-attr]
    tools = up.requests[0].json()["tools"]
    assert tools[0]["function"]["name"] == "read_file"
    assert tools[0]["function"]["parameters"]["properties"] == {"path": {"type": "string"}}


def test_an_upstream_refusal_is_a_google_error_the_sdk_reads(tmp_path: Path) -> None:
    limited = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    with FakeServer() as up:
        up.script(
            *(
                Reply(status=429, chunks=[limited], content_type="application/json")
                for _ in range(2)
            )
        )
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            with pytest.raises(errors.ClientError) as whole:
                sdk.models.generate_content(model="claude", contents="Hi")
            with pytest.raises(errors.ClientError) as streamed:
                list(sdk.models.generate_content_stream(model="claude", contents="Hi"))
    for refused in (whole.value, streamed.value):
        assert (refused.code, refused.status) == (429, "RESOURCE_EXHAUSTED")
        assert "slow down" in (refused.message or "")


def test_a_stream_failing_midway_raises_in_the_sdk(tmp_path: Path) -> None:
    cut = anthropic_stream([{"type": "text", "text": "Partial"}], "end_turn")[:3]
    failed = sse(
        [("error", {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})]
    )
    with FakeServer() as up:
        up.script(Reply(chunks=[*cut, failed]))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            seen: list[str] = []
            stream = sdk.models.generate_content_stream(model="claude", contents="Hi")
            with pytest.raises(errors.APIError) as raised:
                seen.extend(chunk.text or "" for chunk in stream)
    assert "".join(seen) == "Partial"
    assert raised.value.status == "INTERNAL"
    assert "busy" in (raised.value.message or "")


def test_the_token_is_read_from_x_goog_api_key_or_the_key_parameter(tmp_path: Path) -> None:
    with FakeServer() as up:
        up.script(
            *(
                Reply(chunks=anthropic_stream([{"type": "text", "text": "Yes."}], "end_turn"))
                for _ in range(2)
            )
        )
        proxy = replace(settings(tmp_path, up.url, up.url, up.url), token="team-token")
        with running(proxy) as url:
            right, wrong_key = client(url, key="team-token"), client(url, key="guess")
            answer = right.models.generate_content(model="claude", contents="Hi")
            with pytest.raises(errors.ClientError) as wrong:
                wrong_key.models.generate_content(model="claude", contents="Hi")
            body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
            target = f"{url}/v1beta/models/claude:generateContent"
            by_param = httpx2.post(target, params={"key": "team-token"}, json=body, timeout=10)
    assert answer.text == "Yes."
    assert (wrong.value.code, wrong.value.status) == (401, "UNAUTHENTICATED")
    assert "guess" not in (wrong.value.message or "")
    assert by_param.status_code == 200
    assert by_param.json()["candidates"][0]["content"]["parts"] == [{"text": "Yes."}]


def test_the_sdk_lists_models_counts_tokens_and_its_default_version_works(
    tmp_path: Path,
) -> None:
    with FakeServer() as up:
        up.script(Reply(chunks=anthropic_stream([{"type": "text", "text": "v1."}], "end_turn")))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            beta, v1 = client(url), client(url, version="v1")  # the SDK closes a dropped one
            names = [m.name for m in beta.models.list()]
            answer = v1.models.generate_content(model="claude", contents="Hi")
            short, long = (
                beta.models.count_tokens(model="claude", contents="word " * n).total_tokens
                for n in (10, 1000)
            )
    assert {"models/claude,claude-up", "models/gem,g-up", "models/local,qwen3"} <= set(names)
    assert answer.text == "v1."
    assert short is not None
    assert long is not None
    assert long - short >= 4000 // 4  # one token per 4 characters of what would be sent
    assert len(up.requests) == 1  # counting sends nothing upstream


def test_a_conversation_is_one_session_and_each_request_is_in_the_ledger(tmp_path: Path) -> None:
    ledger = tmp_path / "spend.db"
    with FakeServer(respond=answering({"input_tokens": 30}, 7)) as up:
        config = priced_config(tmp_path, up.url, f'ledger = "{ledger}"')
        with served(load_settings(config)) as (url, proxy):
            _, secret = issue(proxy.people.accounts, "alice", team="eng", budget="5usd/30d")
            sdk = client(url, key=secret)
            first = sdk.models.generate_content(model="claude", contents="Start")
            history: list[Any] = ["Start", content(first), "Go on"]
            second = sdk.models.generate_content(model="claude", contents=history)
            wait_for(lambda: len(_ledger(ledger)) == 2)
    sessions = {header(r, "x-toolwire-session") for r in (first, second)}
    assert len(sessions) == 1
    assert _ledger(ledger) == [("alice", "eng", "claude", 30, 7, "ok")] * 2


def _ledger(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(
            'SELECT "user", team, backend, input_tokens, output_tokens, status'
            " FROM toolwire_ledger ORDER BY at"
        ).fetchall()
