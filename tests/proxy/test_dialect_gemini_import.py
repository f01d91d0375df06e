"""What a Gemini request carries reaches the upstream: the system instruction, images,
the generation config, the tool config, failed calls, and an Anthropic upstream's own
thinking, which the SDK sends back as thought parts and the proxy returns signed."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx2
from google.genai import types

from tests.fakes.http import FakeServer, Reply
from tests.proxy.gemini_support import (
    READ,
    client,
    config_with,
    content,
    header,
    parts,
    settings,
    tool_round,
)
from tests.proxy.support import anthropic_stream, openai_text_stream, running
from toolwire.proxy.dialects.gemini import json_schema

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()
# An Anthropic signature with the characters URL-safe base64 writes differently.
SIGNATURE = base64.b64encode(bytes(range(250, 256)) * 4).decode()


def _one_request(tmp: Path, model: str, contents: Any, config: Any) -> dict[str, Any]:
    """The body the upstream of ``model`` was sent for one non-streamed SDK request."""
    with FakeServer() as up:
        up.script(Reply(chunks=anthropic_stream([{"type": "text", "text": "ok"}], "end_turn")))
        with running(settings(tmp, up.url, up.url, up.url)) as url:
            sdk = client(url)
            sdk.models.generate_content(model=model, contents=contents, config=config)
    body: dict[str, Any] = up.requests[0].json()
    return body


def test_system_images_and_generation_config_reach_an_anthropic_upstream(tmp_path: Path) -> None:
    image = types.Part.from_bytes(data=base64.b64decode(PNG), mime_type="image/png")
    config = config_with(system_instruction="Be brief.", max_output_tokens=300, temperature=0.25)
    body = _one_request(tmp_path, "claude", [types.Part(text="What is it?"), image], config)
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 300
    assert body["temperature"] == 0.25
    (message,) = body["messages"]
    assert message["content"][0] == {"type": "text", "text": "What is it?"}
    assert message["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": PNG,
    }
    assert body["tools"][0]["name"] == "read_file"
    assert body["tools"][0]["input_schema"]["properties"] == {"path": {"type": "string"}}
    assert "thinking" not in body  # no thinkingConfig: the backend's default


def test_tool_config_none_offers_no_tools(tmp_path: Path) -> None:
    calling = types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.NONE)
    config = config_with(tool_config=types.ToolConfig(function_calling_config=calling))
    body = _one_request(tmp_path, "claude", "Hi", config)
    assert "tools" not in body


def test_a_failed_call_is_an_error_result(tmp_path: Path) -> None:
    call = types.Part(function_call=types.FunctionCall(name="read_file", args={"path": "x"}))
    failed = types.Part.from_function_response(name="read_file", response={"error": "no such file"})
    contents = [
        types.Content(role="user", parts=[types.Part(text="Read x")]),
        types.Content(role="model", parts=[call]),
        types.Content(role="user", parts=[failed]),
    ]
    body = _one_request(tmp_path, "claude", contents, config_with())
    (result,) = body["messages"][2]["content"]
    assert result["type"] == "tool_result"
    assert result["is_error"] is True
    assert result["tool_use_id"] == body["messages"][1]["content"][0]["id"]
    assert "no such file" in str(result["content"])


def test_an_anthropic_upstreams_thinking_goes_back_to_it_signed(tmp_path: Path) -> None:
    thought = {"type": "thinking", "thinking": "Let me look.", "signature": SIGNATURE}
    call = {"type": "tool_use", "id": "toolu_t", "name": "read_file", "input": {"path": "a"}}
    thinking = types.ThinkingConfig(include_thoughts=True, thinking_budget=8000)
    config = config_with(thinking_config=thinking)
    with FakeServer() as up:
        up.script(Reply(chunks=anthropic_stream([thought, call], "tool_use")))
        up.script(Reply(chunks=anthropic_stream([{"type": "text", "text": "Done."}], "end_turn")))
        with running(settings(tmp_path, up.url, up.url, up.url)) as url:
            sdk = client(url)
            chunks = list(
                sdk.models.generate_content_stream(model="claude", contents="Read", config=config)
            )
            turn = types.Content(role="model", parts=parts(chunks))
            second = sdk.models.generate_content(
                model="claude", contents=tool_round("Read", turn, "A"), config=config
            )
    shown = [p for p in parts(chunks) if p.thought]
    assert "".join(p.text or "" for p in shown) == "Let me look."
    assert second.text == "Done."
    first_body, second_body = (r.json() for r in up.requests)
    assert first_body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    blocks = second_body["messages"][1]["content"]
    assert blocks[0] == {"type": "thinking", "thinking": "Let me look.", "signature": SIGNATURE}
    assert blocks[1]["type"] == "tool_use"


def test_a_session_named_by_header_is_switched_with_its_context(tmp_path: Path) -> None:
    with FakeServer() as chat_up, FakeServer() as claude_up:
        chat_up.script(Reply(chunks=openai_text_stream("The answer is 41.")))
        claude_up.script(
            Reply(chunks=anthropic_stream([{"type": "text", "text": "42."}], "end_turn"))
        )
        with running(settings(tmp_path, chat_up.url, claude_up.url, claude_up.url)) as url:
            sdk = client(url, session="gem-1")
            first = sdk.models.generate_content(model="gemini-2.5-pro", contents="Compute")
            switched = httpx2.post(
                f"{url}/control/switch", json={"backend": "claude", "session": "gem-1"}
            )
            history: list[Any] = ["Compute", content(first), "Check it"]
            second = sdk.models.generate_content(model="gemini-2.5-pro", contents=history)
    assert switched.status_code == 200
    assert [header(r, "x-toolwire-backend") for r in (first, second)] == ["local", "claude"]
    assert header(second, "x-toolwire-session") == "gem-1"
    assert second.text == "42."
    assert "The answer is 41." in json.dumps(claude_up.requests[0].json()["messages"])


def test_gemini_schemas_become_json_schema() -> None:
    schema = READ.parameters.model_dump(mode="json", exclude_none=True)  # type: ignore[union-attr]
    nullable = {"type": "STRING", "nullable": True}
    listed = {"type": "ARRAY", "items": {"type": "INTEGER"}}
    assert json_schema(schema) == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    assert json_schema(nullable) == {"type": ["string", "null"]}
    assert json_schema(listed) == {"type": "array", "items": {"type": "integer"}}


def test_a_malformed_request_or_method_is_refused_in_googles_shape(tmp_path: Path) -> None:
    unused = "http://127.0.0.1:9"  # nothing is sent upstream
    with running(settings(tmp_path, unused, unused, unused)) as url:
        empty = httpx2.post(f"{url}/v1beta/models/claude:generateContent", json={}, timeout=10)
        unknown = httpx2.post(f"{url}/v1beta/models/claude:embedContent", json={}, timeout=10)
    assert empty.status_code == 400
    assert empty.json() == {
        "error": {
            "code": 400,
            "message": "contents: a non-empty list is required",
            "status": "INVALID_ARGUMENT",
        }
    }
    assert unknown.status_code == 404
    assert unknown.json()["error"]["status"] == "NOT_FOUND"
