"""FunctionBackend: the model's answer is a Python function of the request, and the
answer reaches the caller through the real Anthropic stream and decoder."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest

from toolwire.backends import create_backend
from toolwire.backends.base import ModelRequest
from toolwire.config.schema import BackendConfig
from toolwire.errors import HTTPStatusError
from toolwire.events import Event, MessageEnd, TextDelta, ToolCallEnd, ToolCallStart, Usage
from toolwire.history import ToolSpec, user
from toolwire.testing import ErrorResponse, FunctionBackend
from toolwire.testing.streams import anthropic_sse, text, tool_call

pytestmark = pytest.mark.anyio

READ = ToolSpec("Read", "Read a file", {"type": "object", "properties": {"file_path": {}}})


async def _events(backend: Any, request: ModelRequest) -> list[Event]:
    return [event async for event in backend.stream(request)]


def _said(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_the_answer_is_a_function_of_the_request() -> None:
    def model(request: ModelRequest) -> Any:
        asked = request.messages[-1].parts[0].text  # type: ignore[union-attr]
        if request.tools:
            return [*text(f"Reading for {asked}."), *tool_call("toolu_1", "Read", {"a": 1})]
        return f"You said {asked}"

    backend = FunctionBackend(model, chunk_size=5)
    plain = await _events(backend, ModelRequest(system="", messages=(user("hi"),)))
    assert _said(plain) == "You said hi"
    assert plain[-1] == MessageEnd("end_turn", plain[-1].usage)  # type: ignore[union-attr]

    tooled = await _events(backend, ModelRequest("", (user("x"),), tools=(READ,)))
    assert _said(tooled) == "Reading for x."
    start = next(e for e in tooled if isinstance(e, ToolCallStart))
    assert (start.id, start.name) == ("toolu_1", "Read")
    assert next(e for e in tooled if isinstance(e, ToolCallEnd)).arguments == {"a": 1}
    assert isinstance(tooled[-1], MessageEnd)
    assert tooled[-1].stop_reason == "tool_use"
    assert [r.messages[-1] for r in backend.requests] == [user("hi"), user("x")]


async def test_a_coroutine_function_is_awaited_and_replies_come_in_order() -> None:
    async def model(request: ModelRequest) -> str:
        return "awaited"

    assert _said(await _events(FunctionBackend(model), ModelRequest("", ()))) == "awaited"
    scripted = FunctionBackend.replies("one", "two")
    said = [_said(await _events(scripted, ModelRequest("", ()))) for _ in range(2)]
    assert said == ["one", "two"]
    with pytest.raises(AssertionError, match="no answer left"):
        await _events(scripted, ModelRequest("", ()))


async def test_through_the_anthropic_backend_over_http() -> None:
    """As an agent uses it: a real Anthropic backend sends its body to the transport."""
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> Any:
        seen.append(request)
        return tool_call("toolu_9", "Read", {"file_path": "app.py"})

    fake = FunctionBackend(model, chunk_size=3)
    config = BackendConfig(
        name="fake", provider="anthropic", model="claude-test", base_url="http://model.test"
    )
    async with httpx2.AsyncClient(transport=fake.transport()) as client:
        backend = create_backend(config, environ={}, client=client)
        request = ModelRequest("Be brief.", (user("read app.py"),), tools=(READ,))
        events = [event async for event in backend.stream(request)]
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == [{"file_path": "app.py"}]
    assert fake.bodies[0]["model"] == "claude-test"
    assert fake.bodies[0]["stream"] is True
    (asked,) = seen
    assert asked.system == "Be brief."
    assert asked.messages == (user("read app.py"),)
    assert [t.name for t in asked.tools] == ["Read"]


TOO_LONG = ErrorResponse(
    400, {"type": "error", "error": {"type": "invalid_request_error", "message": "too long"}}
)


async def test_an_error_response_is_what_the_provider_refused_with() -> None:
    """Over HTTP the backend reads the status and message; ``stream`` raises the same."""
    fake = FunctionBackend.replies(TOO_LONG, TOO_LONG)
    config = BackendConfig(
        name="fake", provider="anthropic", model="claude-test", base_url="http://model.test"
    )
    async with httpx2.AsyncClient(transport=fake.transport()) as client:
        backend = create_backend(config, environ={}, client=client)
        with pytest.raises(HTTPStatusError) as over_http:
            await _events(backend, ModelRequest("", (user("hi"),)))
    with pytest.raises(HTTPStatusError) as direct:
        await _events(fake, ModelRequest("", (user("hi"),)))
    for raised in (over_http.value, direct.value):
        assert raised.status == 400
        assert "too long" in raised.message


async def test_pace_spaces_the_pieces_of_an_answer() -> None:
    """With ``pace``, the answer's pieces come that far apart: its 30 pieces of 32
    bytes take at least 19 paces (29, less the first events), none at all without it."""
    for pace, slowest, fastest in ((0.01, 0.19, 10.0), (0.0, 0.0, 0.1)):
        backend = FunctionBackend.replies("word " * 40, chunk_size=32, pace=pace)
        loop = asyncio.get_running_loop()
        started = loop.time()
        said = _said([e async for e in backend.stream(ModelRequest("", ()))])
        assert slowest <= loop.time() - started < fastest
        assert said == "word " * 40


async def test_bytes_are_the_stream_as_sent_a_cut_one_included() -> None:
    """An answer of bytes is the provider's body itself: here one cut mid-call, so the
    text arrives, then the decoder's own account of a stream that broke off."""
    whole = anthropic_sse([*text("Let me write."), *tool_call("toolu_1", "Write", {"a": 1})])
    cut = whole[: whole.index(b'"content_block_stop","index":1') - 30]
    backend = FunctionBackend(lambda request: cut)
    events = await _events(backend, ModelRequest("", (user("x"),)))
    assert _said(events) == "Let me write."
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments is None
    assert end.error is not None
    assert "ended before the response did" in end.error
    # What the provider reported before the cut (its message_start) is kept: a proxy
    # settles a budget at it.
    assert events[-1] == MessageEnd("error", Usage(input_tokens=10, output_tokens=0))
    async with httpx2.AsyncClient(transport=backend.transport()) as http:
        sent = await http.post("http://model.test/v1/messages", json={"messages": []})
    assert sent.content == cut
