"""Helpers for the Gemini dialect tests: the official SDK pointed at the proxy, a config
with an upstream of each family, and fake Gemini upstream bodies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google import genai
from google.genai import types

from tests.fakes.http import sse
from tests.proxy.support import write_config
from toolwire.proxy import ProxySettings, load_settings

# The tool the tests declare, in Gemini's own schema dialect (upper-case type names).
READ = types.FunctionDeclaration(
    name="read_file",
    description="Read a file.",
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={"path": types.Schema(type=types.Type.STRING)},
        required=["path"],
    ),
)


def client(
    url: str, key: str = "client-key", version: str = "v1beta", session: str | None = None
) -> genai.Client:
    """The SDK as gemini-cli sets it up: an API key, the proxy as its base URL, and the
    API version gemini-cli's SDK uses (the Python SDK's own default is ``v1``);
    ``session``: sent as ``x-toolwire-session`` (gemini-cli's custom headers)."""
    options = types.HttpOptions(
        base_url=url,
        api_version=version,
        headers={} if session is None else {"x-toolwire-session": session},
        retry_options=types.HttpRetryOptions(attempts=1),
        timeout=10_000,
    )
    made = genai.Client(api_key=key, http_options=options)
    OPEN.append(made)
    return made


#: The clients ``client`` made; closed after each test (tests/proxy/conftest.py), else
#: their pooled sockets are collected in whichever test runs next, as a ResourceWarning.
OPEN: list[genai.Client] = []


def settings(tmp: Path, chat_url: str, anthropic_url: str, gemini_url: str) -> ProxySettings:
    """Backends ``local`` (OpenAI Chat, the default), ``claude`` and ``gem`` (Gemini)."""
    extra = f'[backends.gem]\nprovider = "gemini"\nbase_url = "{gemini_url}"\nmodel = "g-up"'
    return load_settings(write_config(tmp, chat_url, anthropic_url, extra))


def gemini_chunk(parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
    """One SSE event of a Gemini ``streamGenerateContent`` body."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    payload: dict[str, Any] = {"candidates": [candidate], "responseId": "up1"}
    if finish is not None:
        candidate["finishReason"] = finish
        payload["usageMetadata"] = {"promptTokenCount": 40, "candidatesTokenCount": 9}
    return sse([(None, payload)])


def config_with(**fields: Any) -> types.GenerateContentConfig:
    """The request config the tests send: the read tool, plus ``fields``."""
    tool = types.Tool(function_declarations=[READ])
    return types.GenerateContentConfig(tools=[tool], **fields)


def content(response: types.GenerateContentResponse) -> types.Content:
    """The model's turn in ``response`` (what a client sends back in its history)."""
    (candidate,) = response.candidates or []
    assert candidate.content is not None
    return candidate.content


def parts(chunks: list[types.GenerateContentResponse]) -> list[types.Part]:
    """Every part of streamed ``chunks``, in order."""
    return [p for c in chunks for p in content(c).parts or []]


def tool_round(prompt: str, model_turn: types.Content, *outputs: str) -> list[types.Content]:
    """A history a client sends after running the calls of ``model_turn``: the prompt,
    that turn, and one ``read_file`` response per output, in call order."""
    results = [
        types.Part.from_function_response(name="read_file", response={"output": out})
        for out in outputs
    ]
    return [
        types.Content(role="user", parts=[types.Part(text=prompt)]),
        model_turn,
        types.Content(role="user", parts=results),
    ]


def header(response: types.GenerateContentResponse, name: str) -> str:
    """A header of the HTTP response ``response`` came in."""
    http = response.sdk_http_response
    assert http is not None
    assert http.headers is not None
    return http.headers[name]


__all__ = [
    "READ",
    "client",
    "config_with",
    "content",
    "gemini_chunk",
    "header",
    "parts",
    "settings",
]
