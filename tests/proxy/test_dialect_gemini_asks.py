"""What a Gemini client asks of the answer reaches an upstream of each family, with the
``google-genai`` SDK as the client: ``toolConfig`` mode ``ANY`` (and its allowed
names), ``stopSequences``, ``responseMimeType`` with its schema; a stop sequence and a
refusal come back as the SDK reads them, and ``candidateCount`` above 1 is one 400."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.genai import errors, types
from pydantic import BaseModel

from tests.fakes.http import FakeServer, Reply
from tests.proxy.gemini_support import READ, client, gemini_chunk, settings
from tests.proxy.support import anthropic_stream, openai_text_stream, running

# The model each upstream family's requests name (the config's backend names).
MODELS = {"anthropic": "claude", "openai": "local", "gemini": "gem"}
LIST = types.FunctionDeclaration(
    name="list_dir",
    description="List a directory.",
    parameters=types.Schema(
        type=types.Type.OBJECT, properties={"path": types.Schema(type=types.Type.STRING)}
    ),
)


class Weather(BaseModel):
    city: str
    days: int


def _reply(family: str, text: str, stop: str = "end_turn") -> Reply:
    if family == "anthropic":
        return Reply(chunks=anthropic_stream([{"type": "text", "text": text}], stop))  # type: ignore[arg-type]
    if family == "openai":
        return Reply(chunks=openai_text_stream(text))
    finish = {"end_turn": "STOP", "stop_sequence": "STOP", "refusal": "SAFETY"}[stop]
    return Reply(chunks=[gemini_chunk([{"text": text}], finish)])


def _ask(tmp: Path, family: str, config: types.GenerateContentConfig, text: str = "ok") -> Any:
    """The SDK's answer to one non-streamed request, and the body the upstream got."""
    tmp.mkdir(exist_ok=True)
    with FakeServer() as up:
        up.script(_reply(family, text))
        with running(settings(tmp, up.url, up.url, up.url)) as url:
            sdk = client(url)  # kept: a collected client closes its connection
            answer = sdk.models.generate_content(model=MODELS[family], contents="Go", config=config)
        sent: dict[str, Any] = up.requests[0].json()
    return answer, sent


def _forced(names: list[str] | None) -> types.GenerateContentConfig:
    calling = types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=names
    )
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[READ, LIST])],
        tool_config=types.ToolConfig(function_calling_config=calling),
    )


@pytest.mark.parametrize("family", ["anthropic", "openai", "gemini"])
def test_mode_any_forces_a_call_upstream(tmp_path: Path, family: str) -> None:
    _, anyone = _ask(tmp_path / "any", family, _forced(None))
    _, named = _ask(tmp_path / "named", family, _forced(["read_file"]))
    if family == "anthropic":
        assert anyone["tool_choice"] == {"type": "any"}
        assert named["tool_choice"] == {"type": "tool", "name": "read_file"}
    elif family == "openai":
        assert anyone["tool_choice"] == "required"
        assert named["tool_choice"] == {"type": "function", "function": {"name": "read_file"}}
    else:
        assert anyone["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
        assert named["toolConfig"] == {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}
        }


@pytest.mark.parametrize("family", ["anthropic", "openai", "gemini"])
def test_stop_sequences_reach_the_upstream_and_the_stop_reads_as_stop(
    tmp_path: Path, family: str
) -> None:
    config = types.GenerateContentConfig(stop_sequences=["END", "###"])
    with FakeServer() as up:
        up.script(_reply(family, "1 2", "stop_sequence"), _reply(family, "1 2", "stop_sequence"))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            ask: dict[str, Any] = {"model": MODELS[family], "contents": "Go", "config": config}
            whole = sdk.models.generate_content(**ask)
            chunks = list(sdk.models.generate_content_stream(**ask))
        sent = up.requests[0].json()
    for last in (whole, chunks[-1]):
        assert last.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    assert whole.text == "1 2"
    field = {"anthropic": sent.get("stop_sequences"), "openai": sent.get("stop")}
    field["gemini"] = sent.get("generationConfig", {}).get("stopSequences")
    assert field[family] == ["END", "###"]


@pytest.mark.parametrize("family", ["anthropic", "openai", "gemini"])
def test_a_json_schema_answer_reaches_the_upstream_and_the_sdk_parses_it(
    tmp_path: Path, family: str
) -> None:
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_schema=Weather
    )
    answer, sent = _ask(tmp_path, family, config, '{"city": "Oslo", "days": 3}')
    assert answer.parsed == Weather(city="Oslo", days=3)
    if family == "anthropic":  # no field on this wire: the system prompt asks for it
        assert "JSON Schema" in str(sent["system"])
        assert '"days"' in str(sent["system"])
    elif family == "openai":
        schema = sent["response_format"]["json_schema"]["schema"]
        assert sent["response_format"]["type"] == "json_schema"
        assert schema["properties"]["days"]["type"] == "integer"
    else:
        generation = sent["generationConfig"]
        assert generation["responseMimeType"] == "application/json"
        shown = generation.get("responseSchema") or generation["responseJsonSchema"]
        assert set(shown["properties"]) == {"city", "days"}


def test_a_json_schema_the_client_gives_as_json_schema(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {}}}}
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=schema
    )
    _, sent = _ask(tmp_path, "openai", config, "{}")
    assert sent["response_format"]["json_schema"]["schema"] == schema
    _, plain = _ask(tmp_path / "json", "openai", types.GenerateContentConfig(
        response_mime_type="application/json"
    ), "{}")  # fmt: skip
    assert plain["response_format"] == {"type": "json_object"}


def test_several_candidates_are_one_clear_400(tmp_path: Path) -> None:
    with FakeServer() as up:
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            config = types.GenerateContentConfig(candidate_count=2)
            with pytest.raises(errors.ClientError) as whole:
                sdk.models.generate_content(model="claude", contents="Hi", config=config)
            with pytest.raises(errors.ClientError) as streamed:
                list(
                    sdk.models.generate_content_stream(model="claude", contents="Hi", config=config)
                )
        assert up.requests == []
    for refused in (whole.value, streamed.value):
        assert (refused.code, refused.status) == (400, "INVALID_ARGUMENT")
        assert "candidateCount" in (refused.message or "")
        assert "one candidate per request" in (refused.message or "")


@pytest.mark.parametrize("family", ["anthropic", "gemini"])
def test_a_refusal_reads_as_safety_streamed_and_not(tmp_path: Path, family: str) -> None:
    with FakeServer() as up:
        up.script(*(_reply(family, "I can't help with that.", "refusal") for _ in range(2)))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            whole = sdk.models.generate_content(model=MODELS[family], contents="Hi")
            chunks = list(sdk.models.generate_content_stream(model=MODELS[family], contents="Hi"))
    assert whole.candidates[0].finish_reason == types.FinishReason.SAFETY  # type: ignore[index]
    assert whole.text == "I can't help with that."
    last = chunks[-1].candidates[0]  # type: ignore[index]
    assert last.finish_reason == types.FinishReason.SAFETY
    assert "".join(c.text or "" for c in chunks) == "I can't help with that."
