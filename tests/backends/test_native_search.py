"""The provider's own web search in the request a provider receives, per provider, with
the SDKs' parameter types as the oracle where they have one; and the one place that
decides between it, ``WebSearch`` and nothing (``BackendConfig.search_route``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest
from anthropic.types import WebSearchTool20250305Param
from openai.types.responses import WebSearchToolParam

from tests.backends.support import FAST, KEY, REQUEST, collect
from tests.fakes.http import FakeServer, Reply
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.gemini import GeminiBackend
from toolwire.backends.http import HTTPBackend
from toolwire.backends.openai_responses import OpenAIResponsesBackend
from toolwire.config.schema import BackendConfig, SearchRoute
from toolwire.config.web import WebConfig
from toolwire.errors import HTTPStatusError

SEARCHING = dataclasses.replace(REQUEST, web_search=True)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def _sent(server: FakeServer, backend: HTTPBackend) -> dict[str, Any]:
    """The body the provider received (it answers 400: only the request matters)."""
    server.script(
        Reply(400, [b'{"error": {"message": "stop here"}}'], content_type="application/json")
    )
    with pytest.raises(HTTPStatusError):
        collect(backend.stream(SEARCHING))
    body: dict[str, Any] = server.requests[-1].json()
    return body


def test_anthropic_gets_the_web_search_server_tool(server: FakeServer) -> None:
    backend = AnthropicBackend(
        name="c", model="claude-x", api_key=KEY, base_url=server.url, settings=FAST
    )
    tools = _sent(server, backend)["tools"]
    assert tools[0] == {"type": "web_search_20250305", "name": "web_search"}
    pydantic.TypeAdapter(WebSearchTool20250305Param).validate_python(tools[0], strict=True)
    assert [t.get("name") for t in tools[1:]] == ["get_weather"]  # function tools stay


def test_openai_responses_gets_the_web_search_tool(server: FakeServer) -> None:
    backend = OpenAIResponsesBackend(
        name="o", model="gpt-x", api_key=KEY, base_url=server.url + "/v1", settings=FAST
    )
    tools = _sent(server, backend)["tools"]
    assert tools[-1] == {"type": "web_search"}
    pydantic.TypeAdapter(WebSearchToolParam).validate_python(tools[-1], strict=True)
    assert tools[0]["type"] == "function"


def test_gemini_gets_google_search_beside_its_functions(server: FakeServer) -> None:
    backend = GeminiBackend(
        name="g", model="gemini-3-pro", api_key=KEY, base_url=server.url, settings=FAST
    )
    tools = _sent(server, backend)["tools"]
    assert tools == [
        {"functionDeclarations": [{"name": "get_weather", "description": "Weather for a place."}]},
        {"google_search": {}},
    ]


def test_no_search_tool_without_the_flag(server: FakeServer) -> None:
    backend = AnthropicBackend(
        name="c", model="claude-x", api_key=KEY, base_url=server.url, settings=FAST
    )
    server.script(Reply(400, [b"{}"], content_type="application/json"))
    with pytest.raises(HTTPStatusError):
        collect(backend.stream(REQUEST))
    assert all("type" not in t for t in server.requests[0].json()["tools"])


def _backend(provider: str, model: str = "m", base_url: str | None = None) -> BackendConfig:
    return BackendConfig(name="b", provider=provider, model=model, base_url=base_url)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("backend", "search", "route"),
    [
        (_backend("anthropic"), None, "native"),
        (_backend("openai-responses"), None, "native"),
        (_backend("gemini", "gemini-3-pro"), None, "native"),
        # Gemini before 3 refuses google_search beside function declarations.
        (_backend("gemini", "gemini-2.5-pro"), None, None),
        (_backend("gemini", "gemini-2.5-pro"), "searxng", "tool"),
        (_backend("openai-chat"), None, None),
        (_backend("openai-chat"), "native", None),
        (_backend("openai-chat"), "brave", "tool"),
        # A base_url server may not run the provider's search: only when asked for.
        (_backend("anthropic", base_url="http://gw.test"), None, None),
        (_backend("anthropic", base_url="http://gw.test"), "native", "native"),
        # A configured provider wins over the backend's own search.
        (_backend("anthropic"), "tavily", "tool"),
    ],
)
def test_search_route(
    backend: BackendConfig, search: str | None, route: SearchRoute | None
) -> None:
    web = WebConfig.model_validate({"search": search, "searxng_url": "http://127.0.0.1:1"})
    assert backend.search_route(web) == route


def test_a_text_format_backend_has_no_native_search() -> None:
    backend = BackendConfig(name="b", provider="anthropic", model="m", tool_format="hermes")
    assert backend.search_route(WebConfig()) is None
