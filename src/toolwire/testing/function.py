"""A model whose answer is a Python function of the request: ``FunctionBackend``.

The function gets the ``ModelRequest`` (system prompt, history, tools) and returns what
the model says: a string, or normalized events (``testing.streams``: ``text``,
``thinking``, ``tool_call``, ``end``), or the stream's bytes themselves (a stream cut
off mid-answer, say). The answer is rendered as the Anthropic Messages
stream a provider would send and read back by toolwire's own decoder, so what a test sees
went through the same bytes-to-events path as a real response::

    from toolwire.testing import FunctionBackend
    from toolwire.testing.streams import text, tool_call

    def model(request):
        if request.messages[-1].role == "tool":  # the Read came back
            return "It defines greet()."
        return [*text("Reading."), *tool_call("toolu_1", "Read", {"file_path": "app.py"})]

    backend = FunctionBackend(model)

Two ways in: ``stream(request)`` is the ``Backend`` protocol (hand it to whatever takes a
backend); ``transport()`` is an HTTP transport that answers the Anthropic Messages API,
for an agent that makes its own backends: give ``toolwire acp``'s agent an HTTP client on
it (``ToolwireAgent(..., http=httpx2.AsyncClient(transport=backend.transport()))``) and an
``anthropic`` backend in its configuration, and its real request builder, HTTP path and
decoder run. There the function gets the request read back from the body the agent sent
(``bodies`` keeps those bodies, exactly as sent).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, TypeAlias

import httpx2

from toolwire.backends.base import ModelRequest, Tap
from toolwire.decode import decoder_for
from toolwire.errors import HTTPStatusError
from toolwire.events import Event, MessageEnd, ToolCallStart
from toolwire.handoff.importers import import_anthropic
from toolwire.history import ToolSpec
from toolwire.testing.streams import anthropic_sse, end, text


@dataclass(frozen=True)
class ErrorResponse:
    """An answer that is the provider refusing the request: an HTTP ``status`` and its
    JSON ``body`` (a context-length error, an overload). The transport sends it as is, so
    toolwire's HTTP path reads it; ``stream`` raises the ``HTTPStatusError`` that path
    would."""

    status: int
    body: Mapping[str, Any]


Answer: TypeAlias = str | Sequence[Event] | bytes | ErrorResponse
"""What the model says: plain text, or events (a ``MessageEnd`` is added when missing),
or an Anthropic SSE body sent as is (``bytes``: one the connection cut, say), or an
``ErrorResponse``."""

ModelFunction: TypeAlias = Callable[[ModelRequest], Answer | Awaitable[Answer]]
"""The model: the request in, the answer out (a coroutine function is awaited)."""


class FunctionBackend:
    """A backend answered by ``function`` (set it later with ``backend.function = ...``).

    ``requests`` keeps every request the function was asked, ``bodies`` every JSON body
    the HTTP transport received. ``chunk_size``: the stream is cut into pieces of this
    many bytes, so the decoder sees a field split across reads as it would on a network.
    ``pace``: seconds between two pieces, for a test that acts while the answer streams
    (a cancel); read when an answer starts, so the function may set it for its own.
    """

    provider = "anthropic"
    wire_format = "anthropic"
    tool_format = "native"

    def __init__(
        self,
        function: ModelFunction | None = None,
        *,
        name: str = "function",
        model: str = "function-model",
        chunk_size: int = 64,
        pace: float = 0.0,
    ) -> None:
        self.function = function
        self.name = name
        self.model = model
        self.chunk_size = chunk_size
        self.pace = pace
        self.requests: list[ModelRequest] = []
        self.bodies: list[dict[str, Any]] = []
        #: The headers of each HTTP request (``transport()``), in order: the key sent.
        self.headers: list[dict[str, str]] = []

    @classmethod
    def replies(cls, *answers: Answer, **options: Any) -> FunctionBackend:
        """A backend that gives ``answers`` in order, one per request (``script``)."""
        backend = cls(**options)
        backend.script(*answers)
        return backend

    def script(self, *answers: Answer) -> None:
        """From now on, give ``answers`` in order, one per request, whatever is asked."""
        queue = list(answers)

        def next_answer(request: ModelRequest) -> Answer:
            if not queue:
                raise AssertionError(f"no answer left for request {len(self.requests)}")
            return queue.pop(0)

        self.function = next_answer

    async def body(self, request: ModelRequest) -> bytes | ErrorResponse:
        """The Anthropic SSE body of the function's answer to ``request`` (or its error)."""
        if self.function is None:
            raise AssertionError("FunctionBackend: no function set (backend.function = ...)")
        self.requests.append(request)
        answer = self.function(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, ErrorResponse | bytes):
            return answer
        events = _completed(answer)
        return anthropic_sse(events, model=self.model, message_id=f"msg_{len(self.requests)}")

    async def stream(
        self, request: ModelRequest, *, tap: Tap | None = None
    ) -> AsyncGenerator[Event, None]:
        """The answer's events, decoded from its stream piece by piece (``Backend``)."""
        body = await self.body(request)
        if isinstance(body, ErrorResponse):
            error = body.body.get("error", {})
            raise HTTPStatusError(body.status, str(error.get("message", "")), error.get("type"))
        decoder = decoder_for(self.wire_format)
        async for chunk in _stream(_pieces(body, self.chunk_size), self.pace):
            if tap is not None:
                tap(chunk)
            for event in decoder.feed(chunk):
                yield event
        for event in decoder.close():
            yield event

    def transport(self) -> httpx2.AsyncBaseTransport:
        """An HTTP transport answering ``POST .../v1/messages`` with the function's answer."""
        return httpx2.MockTransport(self._handle)

    async def _handle(self, http_request: httpx2.Request) -> httpx2.Response:
        if http_request.method != "POST" or not http_request.url.path.endswith("/messages"):
            return httpx2.Response(404, json={"type": "error", "error": {"type": "not_found"}})
        sent: dict[str, Any] = json.loads(await http_request.aread())
        self.bodies.append(sent)
        self.headers.append(dict(http_request.headers))
        body = await self.body(_request_of(sent))
        if isinstance(body, ErrorResponse):
            return httpx2.Response(body.status, json=dict(body.body))
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content=_stream(_pieces(body, self.chunk_size), self.pace),
        )


def _completed(answer: str | Sequence[Event]) -> list[Event]:
    events = text(answer) if isinstance(answer, str) else list(answer)
    if not events or not isinstance(events[-1], MessageEnd):
        calls = any(isinstance(e, ToolCallStart) for e in events)
        events.append(end("tool_use" if calls else "end_turn", output_tokens=len(events)))
    return events


def _pieces(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), max(size, 1))]


async def _stream(pieces: list[bytes], pace: float) -> AsyncIterator[bytes]:
    for n, piece in enumerate(pieces):
        if pace and n:
            await asyncio.sleep(pace)
        yield piece


def _request_of(body: dict[str, Any]) -> ModelRequest:
    """The ``ModelRequest`` an Anthropic Messages body was built from, as far as it says."""
    system = body.get("system", "")
    if isinstance(system, list):  # blocks (with cache_control markers)
        system = "".join(block.get("text", "") for block in system)
    tools = tuple(
        ToolSpec(t["name"], t.get("description", ""), t.get("input_schema", {}))
        for t in body.get("tools", ())
    )
    return ModelRequest(
        system=system,
        messages=tuple(import_anthropic(body.get("messages", []))),
        tools=tools,
        max_tokens=body.get("max_tokens", 8192),
        temperature=body.get("temperature"),
        cache=json.dumps(body).find('"cache_control"') >= 0,
    )


__all__ = ["Answer", "ErrorResponse", "FunctionBackend", "ModelFunction"]
