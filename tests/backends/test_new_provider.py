"""The recipe of docs/architecture.md, "Adding a wire format", followed in a test.

A toy OpenAI-style format is added the way the recipe says, with its three pieces here
instead of in ``src``: a profile, a builder on the shared preparation step and a decoder,
then its one registry entry. Nothing else is touched, and the configuration, the backend
factory, the decoders, the windows, the usage meter and the proxy's telemetry all take it
up: a user's ``[backends.NAME]`` table with the new ``provider`` streams a response.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests.backends.support import FAST, REQUEST, collect
from tests.fakes.http import FakeServer, Reply, sse
from toolwire.backends._prepare import prepare
from toolwire.backends.base import ModelRequest
from toolwire.backends.factory import create_backend
from toolwire.backends.http import HTTPBackend
from toolwire.config.load import load_config
from toolwire.context.meter import prompt_tokens
from toolwire.context.windows import window_for
from toolwire.decode import decoder_for
from toolwire.decode.openai_chat import OpenAIChatDecoder
from toolwire.events import MessageEnd, TextDelta, Usage
from toolwire.history import ToolSpec
from toolwire.providers import (
    PROFILES,
    Detected,
    Family,
    ImageLimits,
    NameRule,
    ProviderProfile,
    WireFormat,
)
from toolwire.proxy.telemetry import provider_name
from toolwire.tools.terminal import hidden_variables

KEY = "toy-key-abcdefghijklmnop0123456789"
# In src the recipe adds the name to ``WireFormat`` too; registered at run time, it is not.
TOY_FORMAT = cast(WireFormat, "toy-chat")

# 1. The profile (``src/toolwire/providers/toy.py`` in the recipe).
TOY = ProviderProfile(
    wire_format="toy-chat",
    backend=f"{__name__}:ToyBackend",
    decoder=f"{__name__}:ToyDecoder",
    default_url="https://api.toy.invalid/v1",
    key_env="TOY_API_KEY",
    acp_protocol="openai",
    otel_name="toy",
    name_rule=NameRule("a-zA-Z0-9_", 32),
    images=ImageLimits("toy", frozenset({"image/png"}), None, None, 10_000_000),
    families=(Family("toy-large", 300_000, 20_000),),
    detected=Detected("toy", "toy-large-1", ("TOY_API_KEY",)),
)


# 2. The builder (``src/toolwire/backends/toy.py``): URL, headers and body.
class ToyBackend(HTTPBackend):
    profile = TOY

    def url(self) -> str:
        return f"{self.base_url}/toy/stream"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        assert self.name_rule is not None
        p = prepare(request, self.name_rule, self.tool_format, vision=self.vision)
        texts = [t.text for m in p.history for t in m.parts if hasattr(t, "text")]
        return {
            "model": self.model,
            "system": p.system,
            "prompt": texts,
            "functions": [p.names.wire(t.name) for t in request.tools],
        }


# 3. The decoder (``src/toolwire/decode/toy.py``): OpenAI-style, so OpenAI Chat's.
class ToyDecoder(OpenAIChatDecoder):
    pass


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """4. The registry entry (``PROFILES`` in ``src/toolwire/providers/__init__.py``)."""
    monkeypatch.setitem(PROFILES, TOY.wire_format, TOY)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def _answer() -> bytes:
    chunk = {"object": "chat.completion.chunk", "model": "toy-large-1"}
    return sse(
        [
            (None, {**chunk, "choices": [{"index": 0, "delta": {"content": "Sunny."}}]}),
            (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            (
                None,
                {**chunk, "choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 2}},
            ),
            (None, "[DONE]"),
        ]
    )


def _config(tmp_path: Path, server: FakeServer) -> Path:
    file = tmp_path / "config.toml"
    file.write_text(
        f'[backends.toy]\nprovider = "toy-chat"\nmodel = "toy-large-1"\n'
        f'base_url = "{server.url}/v1"\napi_key_env = "TOY_API_KEY"\n'
    )
    return file


@pytest.mark.usefixtures("registered")
def test_a_configured_backend_of_the_new_format_streams(tmp_path: Path, server: FakeServer) -> None:
    config = load_config(_config(tmp_path, server), environ={"TOY_API_KEY": KEY})
    backend = create_backend(config.backends["toy"], environ={"TOY_API_KEY": KEY})
    assert isinstance(backend, ToyBackend)
    assert (backend.provider, backend.wire_format) == ("toy-chat", "toy-chat")
    backend.settings = FAST
    server.script(Reply(200, [_answer()]))
    events = collect(backend.stream(REQUEST))
    sent = server.requests[-1]
    assert (sent.path, sent.headers["authorization"]) == ("/v1/toy/stream", f"Bearer {KEY}")
    assert sent.json()["functions"] == ["get_weather"]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Sunny."]
    end = events[-1]
    assert isinstance(end, MessageEnd)
    assert end.stop_reason == "end_turn"
    assert end.usage is not None
    assert end.usage.input_tokens == 40


@pytest.mark.usefixtures("registered")
def test_the_profile_gives_the_key_detection_and_default_url(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text('[backends.t]\nprovider = "toy-chat"\nmodel = "toy-large-1"\n')
    configured = load_config(file, environ={}).backends["t"]
    assert configured.api_key_env == "TOY_API_KEY"  # its own service's key variable
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    env = {"TOY_API_KEY": KEY, "XDG_CONFIG_HOME": str(tmp_path)}
    detected = load_config(empty, environ=env)
    assert str(detected.backends["toy"].provider) == "toy-chat"
    assert detected.backends["toy"].model == "toy-large-1"
    backend = create_backend(detected.backends["toy"], environ={"TOY_API_KEY": KEY})
    assert isinstance(backend, HTTPBackend)
    assert backend.url() == "https://api.toy.invalid/v1/toy/stream"


@pytest.mark.usefixtures("registered")
def test_every_package_reads_the_new_profile() -> None:
    assert isinstance(decoder_for("toy-chat"), ToyDecoder)  # replay and `toolwire decode`
    window = window_for("toy-large-1")
    assert (window.size, window.source) == (300_000, "family toy-large")
    cached = Usage(input_tokens=100, cache_read_tokens=60)
    assert prompt_tokens(cached, TOY_FORMAT) == 100  # its input count holds the cache
    assert provider_name("toy-chat") == "toy"
    assert "TOY_API_KEY" in hidden_variables()  # a command never sees its key


def test_an_unregistered_format_is_refused_in_one_line(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text('[backends.t]\nprovider = "toy-chat"\nmodel = "toy-large-1"\n')
    with pytest.raises(Exception, match=r"provider = 'toy-chat' is not valid; use one of"):
        load_config(file, environ={})


def test_a_tool_name_the_new_rule_refuses_is_rewritten() -> None:
    backend = ToyBackend(name="toy", model="toy-large-1", api_key=KEY, settings=FAST)
    request = ModelRequest("", REQUEST.messages, (ToolSpec("mcp__a-b", "", {}),))
    wire = backend.build_body(request)["functions"][0]
    assert wire != "mcp__a-b"
    assert TOY.name_rule.accepts(wire)
