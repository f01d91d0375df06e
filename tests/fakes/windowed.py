"""A fake Anthropic Messages server that enforces a context window, with a scripted reader.

``WindowedServer`` (over HTTP; ``WindowedModel``, the same as a ``FunctionBackend``'s
function, for an agent in the test's process) counts each request's tokens with a fixed
rule (``count_tokens``: the UTF-8 bytes of the system prompt, the tools' JSON and the
messages' JSON over ``bytes_per_token``, rounded up) and rejects a request that does
not fit as the API does: HTTP 400 ``invalid_request_error`` with the API's own message
("prompt is too long: N tokens > W maximum" past the window; "input length and
`max_tokens` exceed context limit: N + M > W, ..." when only the answer's share does not
fit). Otherwise it streams a
real-shaped answer whose ``message_start`` reports the count as ``input_tokens``.

The "model" reads files: ``plan(task, files)`` scripts the next prompt, answered with one
``Read`` ``tool_use`` per file (counted server-side), then an ``end_turn`` text. A summary
request (no tools, the handoff summarizer's system prompt) gets a short fixed summary, and
``stall_summaries()`` holds those until ``release()`` (cancel during a compaction).

Every request is recorded (``seen``; the server's ``requests`` too); every model request
is checked: the newest file served so far must be in it verbatim (as ``Read`` shows it:
``cat -n`` lines), and so must the first task and the current one. ``violations`` lists
each miss, with whether the request carried a compaction block (the ``[TOOLWIRE``
marker). The counting rule is public (``count_tokens``) so that a benchmark can enforce
the same window.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.http import FakeServer, Received, Reply, _Handler
from toolwire.backends.base import ModelRequest
from toolwire.events import Event, MessageEnd, StopReason, Usage
from toolwire.handoff.summarize import SYSTEM as SUMMARIZER_SYSTEM
from toolwire.testing import FunctionBackend, streams
from toolwire.testing.function import Answer, ErrorResponse

#: What marks a compaction block (or a handoff block) inside a request.
MARKER = "[TOOLWIRE"
#: The fake's tokenizer: this many UTF-8 bytes make one token.
BYTES_PER_TOKEN = 3.5
SUMMARY = "The assistant has been reading the project's files one at a time, as asked."
FINAL = "I have read every file you listed."
READ_LINE_CHARS = 2000  # Read cuts longer lines; the fake's files never have one


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def count_tokens(body: Mapping[str, Any], bytes_per_token: float = BYTES_PER_TOKEN) -> int:
    """The request's input tokens: system + tools JSON + messages JSON, bytes / ratio."""
    system = body.get("system", "")
    size = len((system if isinstance(system, str) else _json(system)).encode())
    size += len(_json(body.get("tools", [])).encode()) + len(_json(body["messages"]).encode())
    return math.ceil(size / bytes_per_token)


def overflow_message(tokens: int, max_tokens: int, window: int, wording: str = "api") -> str | None:
    """The API's message for a request that does not fit ``window``, or None.

    ``wording``: ``api`` as the API words it (past the window, "prompt is too long";
    within it but not with the answer's share, the ``max_tokens`` form); ``prompt`` or
    ``max_tokens`` to always word it one way (compatible servers do, and a test can then
    count on the form it exercises)."""
    if tokens + max_tokens <= window:
        return None
    if wording == "prompt":  # the answer's share counted in, so that the sum is true
        return f"prompt is too long: {tokens + max_tokens} tokens > {window} maximum"
    if wording == "api" and tokens > window:
        return f"prompt is too long: {tokens} tokens > {window} maximum"
    return (
        f"input length and `max_tokens` exceed context limit: {tokens} + {max_tokens} > "
        f"{window}, decrease input length or `max_tokens` and try again"
    )


def error_body(message: str) -> bytes:
    """Anthropic's error body for an ``invalid_request_error``."""
    error = {"type": "invalid_request_error", "message": message}
    return _json({"type": "error", "error": error}).encode()


def request_text(body: Mapping[str, Any]) -> str:
    """Every text of a request (system, text blocks, tool results), one per line."""
    out: list[str] = []
    system = body.get("system", "")
    out += [system] if isinstance(system, str) else [b.get("text", "") for b in system]
    for message in body["messages"]:
        content = message["content"]
        out += [content] if isinstance(content, str) else [_block_text(b) for b in content]
    return "\n".join(out)


def _block_text(block: Mapping[str, Any]) -> str:
    if block.get("type") == "text":
        return str(block.get("text", ""))
    if block.get("type") == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return content
        return "\n".join(str(b.get("text", "")) for b in content)
    return ""


def system_text(body: Mapping[str, Any]) -> str:
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def is_summary(body: Mapping[str, Any]) -> bool:
    """A compaction's summary request: no tools, the handoff summarizer's system prompt."""
    return not body.get("tools") and system_text(body).startswith(SUMMARIZER_SYSTEM)


def read_view(text: str) -> str:
    """A whole file as ``Read`` returns it: ``cat -n`` lines (number in 6 columns, a tab)."""
    lines = text.splitlines()
    assert all(len(line) <= READ_LINE_CHARS for line in lines)
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=1))


@dataclass
class Seen:
    """One request as the fake judged it."""

    index: int
    body: dict[str, Any]
    raw: bytes
    tokens: int
    kind: str  # "model" or "summary"
    status: int = 200
    compacted: bool = False  # the request carries a compaction block
    answered: str = ""  # "read PATH", "final", "summary", or the 400's message

    @property
    def text(self) -> str:
        return request_text(self.body)


@dataclass
class Plan:
    task: str
    files: list[Path]
    next: int = 0


@dataclass
class Rejection:
    index: int
    tokens: int
    message: str


class WindowedModel:
    """The window and the reader without a server: ``answer`` judges one request;
    ``serve(backend)`` makes it a ``FunctionBackend``'s function (``acp.model``)."""

    def __init__(
        self,
        *,
        window: int,
        bytes_per_token: float = BYTES_PER_TOKEN,
        wording: str = "api",
    ) -> None:
        self.window = window
        self.bytes_per_token = bytes_per_token
        self.wording = wording
        self.seen: list[Seen] = []
        self.rejected: list[Rejection] = []
        self.violations: list[str] = []
        self.served: list[Path] = []  # every file a Read was asked for, in order
        self.tasks: list[str] = []
        self.summary_started = threading.Event()
        self._plan: Plan | None = None
        self._gate: threading.Event | None = None
        self._lock = threading.Lock()

    # -- the script --------------------------------------------------------------------

    def plan(self, task: str, files: Sequence[Path] = ()) -> None:
        """The next prompt: ``task`` (its text, checked for later), read ``files``, answer."""
        with self._lock:
            self._plan = Plan(task, list(files))
            self.tasks.append(task)

    def stall_summaries(self) -> None:
        """Hold every summary request until ``release()``."""
        self._gate = threading.Event()
        self.summary_started.clear()

    def release(self) -> None:
        if self._gate is not None:
            self._gate.set()
            self._gate = None

    def serve(self, backend: FunctionBackend) -> None:
        """Answer ``backend``'s requests from now on: the body it was sent, judged here (in
        a thread, as the server's handler: a stalled summary blocks no event loop)."""

        async def answer(request: ModelRequest) -> Answer:
            raw = json.dumps(backend.bodies[-1]).encode()  # the body as sent, key order kept
            received = Received("POST", "/v1/messages", {}, raw)
            reply = await asyncio.to_thread(self.answer, received)
            if reply.status != 200:
                return ErrorResponse(reply.status, json.loads(b"".join(reply.chunks)))
            return b"".join(reply.chunks)

        backend.function = answer

    # -- what happened -----------------------------------------------------------------

    def model_requests(self) -> list[Seen]:
        return [s for s in self.seen if s.kind == "model"]

    def summaries(self) -> list[Seen]:
        return [s for s in self.seen if s.kind == "summary"]

    def compactions(self) -> int:
        """How many times the compaction block a model request carries changed."""
        blocks = [_block_of(s.text) for s in self.model_requests() if s.status == 200]
        changes = 0
        for before, after in zip([None, *blocks], blocks, strict=False):
            changes += after is not None and after != before
        return changes

    # -- answering ---------------------------------------------------------------------

    def answer(self, received: Received) -> Reply:
        body = received.json()
        summary = is_summary(body)
        gate = self._gate if summary else None
        with self._lock:
            seen = Seen(len(self.seen), body, received.body, self._count(body), "model")
            self.seen.append(seen)
            seen.compacted = MARKER in seen.text
            if summary:
                seen.kind = "summary"
        if gate is not None:
            self.summary_started.set()
            gate.wait(30)
        with self._lock:
            message = overflow_message(seen.tokens, body["max_tokens"], self.window, self.wording)
            if message is not None:
                seen.status, seen.answered = 400, message
                self.rejected.append(Rejection(seen.index, seen.tokens, message))
                return Reply(400, [error_body(message)], content_type="application/json")
            if summary:
                seen.answered = "summary"
                return self._stream(seen, streams.text(SUMMARY, by_word=True), "end_turn")
            self._check(seen)
            return self._next_step(seen)

    def _count(self, body: Mapping[str, Any]) -> int:
        return count_tokens(body, self.bytes_per_token)

    def _next_step(self, seen: Seen) -> Reply:
        plan = self._plan
        if plan is None or plan.next >= len(plan.files):
            seen.answered = "final"
            self._plan = None
            return self._stream(seen, streams.text(FINAL, by_word=True), "end_turn")
        path = plan.files[plan.next]
        plan.next += 1
        self.served.append(path)
        seen.answered = f"read {path}"
        call_id = f"toolu_read_{len(self.served):03d}"
        call = streams.tool_call(call_id, "Read", {"file_path": str(path)}, piece=16)
        return self._stream(seen, [*streams.text(f"Reading {path.name}."), *call], "tool_use")

    def _stream(self, seen: Seen, events: list[Event], stop: StopReason) -> Reply:
        said = "".join(getattr(e, "text", "") for e in events)
        end = MessageEnd(stop, Usage(output_tokens=math.ceil(len(said.encode()) / 3.5) + 1))
        payloads = streams.anthropic_payloads(
            [*events, end], message_id=f"msg_{seen.index:04d}", input_tokens=seen.tokens, ping=True
        )
        return Reply(chunks=streams.sse_chunks(payloads))

    def _check(self, seen: Seen) -> None:
        """The newest file verbatim and the tasks in every model request."""
        text = seen.text
        where = f"request {seen.index}" + (" (compacted)" if seen.compacted else "")
        if self.served:
            newest = self.served[-1]
            if read_view(newest.read_text(encoding="utf-8")) not in text:
                self.violations.append(f"{where}: the newest file {newest.name} is not verbatim")
        wanted = dict.fromkeys(self.tasks[:1] + self.tasks[-1:])
        for task in wanted:
            if task not in text:
                self.violations.append(f"{where}: the task {task[:40]!r} is missing")


def _block_of(text: str) -> str | None:
    """The compaction block of a request's text (to its closing marker line), or None."""
    start = text.find(MARKER)
    if start < 0:
        return None
    close = text.find("[/TOOLWIRE", start)
    if close < 0:
        return text[start:]
    line_end = text.find("\n", close)
    return text[start:] if line_end < 0 else text[start:line_end]


class WindowedServer(WindowedModel, FakeServer):
    """``with WindowedServer(window=24000) as fake: fake.plan(task, files); ... fake.url``."""

    def __init__(
        self, *, window: int, bytes_per_token: float = BYTES_PER_TOKEN, wording: str = "api"
    ) -> None:
        FakeServer.__init__(self)
        WindowedModel.__init__(
            self, window=window, bytes_per_token=bytes_per_token, wording=wording
        )
        self._server.RequestHandlerClass = type("Handler", (_WindowedHandler,), {"fake": self})

    def __enter__(self) -> WindowedServer:
        FakeServer.__enter__(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()  # a stalled handler answers (to nobody) and ends
        FakeServer.__exit__(self, *exc)


class _WindowedHandler(_Handler):
    fake: WindowedServer  # set by WindowedServer

    def do_POST(self) -> None:  # noqa: N802  # the http.server's name
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        received = Received("POST", self.path, headers, body)
        self.fake.requests.append(received)
        self.close_connection = True
        if self.path.split("?")[0] != "/v1/messages":
            reply = Reply(404, [error_body(f"no route {self.path}")], content_type="text/plain")
        else:
            reply = self.fake.answer(received)
        try:
            self._reply(reply)
        except OSError:
            self._client_left()


__all__ = [
    "BYTES_PER_TOKEN",
    "FINAL",
    "MARKER",
    "SUMMARY",
    "Rejection",
    "Seen",
    "WindowedModel",
    "WindowedServer",
    "count_tokens",
    "error_body",
    "is_summary",
    "overflow_message",
    "read_view",
    "request_text",
]
