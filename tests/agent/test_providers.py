"""``providers/list``, ``providers/set``, ``providers/disable`` (ACP, unstable): the editor
points a backend at an endpoint and key of its own. The next prompt goes there with the
handoff, as after a model switch; the key is sent to that endpoint and nowhere else: not
back to the editor, not to a log, not to the session store or any other file."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from acp.connection import StreamDirection
from acp.exceptions import RequestError

from tests.acp_check import unstable_validator
from tests.agent.pair import AgentUnderTest, agent_under_test, backend_table
from tests.agent.support import answer, check_wire, text_of
from toolwire.agent.features.providers import Providers
from toolwire.backends.base import ModelRequest
from toolwire.config import load_config

pytestmark = pytest.mark.anyio

#: The key the editor sets; shaped like none the secrets scrubber knows, on purpose.
EDITOR_KEY = "editorkey-5bX0q2LmT9vRw7yZ"


def _ext(acp: AgentUnderTest) -> Any:
    return acp.run.conn._conn


async def _call(acp: AgentUnderTest, method: str, params: dict[str, Any]) -> Any:
    """A request the SDK client has no method for, as the spec writes it."""
    return await _ext(acp).send_request(method, params)


def _valid(definition: str, value: Any) -> None:
    errors = list(unstable_validator(definition).iter_errors(value))
    assert not errors, f"{definition}: {errors[0].message}"


def _model(request: ModelRequest) -> Any:
    last = request.messages[-1]
    if last.role == "tool":
        return "It defines greet()."
    if last.text() == "Read app.py":
        return answer(("tool", "Read", {"file_path": "app.py"}, "toolu_read"))
    return "Noted."


async def test_providers_set_moves_the_session_with_the_handoff_and_hides_the_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    # Only the last turn verbatim: the earlier one reaches the new endpoint as the handoff.
    async with agent_under_test(tmp_path, config="\n[handoff]\nkeep_last = 1\n") as acp:
        acp.model.function = _model
        sid = await acp.start()
        assert (await acp.prompt(sid, "Read app.py")).stop_reason == "end_turn"
        assert (await acp.prompt(sid, "Thanks")).stop_reason == "end_turn"
        listed = await _call(acp, "providers/list", {})
        _valid("ListProvidersResponse", listed)
        fake = {p["providerId"]: p for p in listed["providers"]}["fake"]
        assert fake["current"] == {"apiType": "anthropic", "baseUrl": "http://model.test"}
        assert fake["required"] is True  # the default backend cannot be disabled
        params = {
            "providerId": "fake",
            "apiType": "anthropic",
            "baseUrl": "http://editor.test",
            "headers": {"x-api-key": EDITOR_KEY},
        }
        _valid("SetProviderRequest", params)
        _valid("SetProviderResponse", await _call(acp, "providers/set", params))
        before = len(acp.model.bodies)
        assert (await acp.prompt(sid, "What next?")).stop_reason == "end_turn"
        # The next prompt went to the editor's endpoint with the editor's key...
        sent = list(zip(acp.model.headers[before:], acp.model.bodies[before:], strict=True))
        assert all(h["host"] == "editor.test" for h, _ in sent)
        assert all(h["x-api-key"] == EDITOR_KEY for h, _ in sent)
        # ...with the handoff: the earlier tool work carried in its block.
        prompt_body = json.dumps(sent[-1][1])
        assert "now answers from the endpoint the editor set" in text_of(acp.run.notifications())
        assert "[TOOLWIRE HANDOFF]" in prompt_body
        assert "return 'hi'" in prompt_body
        listed = await _call(acp, "providers/list", {})
        _valid("ListProvidersResponse", listed)
        current = {p["providerId"]: p for p in listed["providers"]}["fake"]["current"]
        assert current == {"apiType": "anthropic", "baseUrl": "http://editor.test"}
        check_wire(acp.run.wire)
        written = [
            json.dumps(e.message) for e in acp.run.wire if e.direction == StreamDirection.INCOMING
        ]
    # The key is nowhere the agent wrote: the wire, the log, any file (sessions.db too).
    assert EDITOR_KEY not in "".join(written)
    assert EDITOR_KEY not in caplog.text
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "sessions.db" for p in files)
    for path in files:
        assert EDITOR_KEY.encode() not in path.read_bytes(), f"the key is in {path}"


async def test_providers_disable_and_what_is_refused(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, config=backend_table("b", "model-b")) as acp:
        acp.model.function = lambda request: "Hi."
        sid = await acp.start()
        with pytest.raises(RequestError):  # the default backend is required
            await _call(acp, "providers/disable", {"providerId": "fake"})
        with pytest.raises(RequestError):  # a protocol toolwire does not speak
            await _call(
                acp,
                "providers/set",
                {"providerId": "b", "apiType": "bedrock", "baseUrl": "http://x.test"},
            )
        await acp.run.conn.set_config_option(config_id="model", session_id=sid, value="b")
        _valid(
            "DisableProviderResponse", await _call(acp, "providers/disable", {"providerId": "b"})
        )
        listed = {p["providerId"]: p for p in (await _call(acp, "providers/list", {}))["providers"]}
        assert listed["b"].get("current") is None
        # The session chose b; b is disabled, so the next prompt stays on the default.
        assert (await acp.prompt(sid, "Hello")).stop_reason == "end_turn"
        assert acp.model.bodies[-1]["model"] == "claude-test"
        check_wire(acp.run.wire)


@pytest.mark.parametrize(
    ("url", "provider"),
    [
        ("http://localhost:8000/v1", "openai-chat"),
        ("https://api.openai.com/v1", "openai-responses"),
    ],
)
def test_an_openai_endpoint_of_its_own_speaks_chat_completions(
    tmp_path: Path, url: str, provider: str
) -> None:
    config = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)})
    params = {"providerId": "openai", "apiType": "openai", "baseUrl": url, "headers": {}}
    chosen = Providers().set(config, params).backends["openai"]
    assert (chosen.provider, chosen.base_url, chosen.api_key_env) == (provider, url, None)
