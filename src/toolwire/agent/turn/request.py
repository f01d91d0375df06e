"""The pieces of one model request of a turn: what is sent, to which backend, and the
stream of its answer into the editor.

``Turn._respond`` puts them together (sizing, compaction, the one retry after a
context-length refusal or a refused image). ``Requests(session, runtime)`` holds no turn
state of its own: each of its verbs says in its arguments what else it reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolwire.agent.features.agent_types import TASK
from toolwire.agent.protocol.ids import IdGuard
from toolwire.agent.protocol.outbox import Ticker
from toolwire.agent.session import mcp_calls
from toolwire.agent.session.request_shape import request_shape
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.turn.collect import ResponseCollector
from toolwire.agent.turn.digest import describe_task
from toolwire.backends import (
    HTTPBackend,
    ModelRequest,
    RecordingBackend,
    TappableBackend,
    create_backend,
)
from toolwire.backends.refusal import block_refusal, noted, refused_images
from toolwire.context import ContextMeter, estimate_request
from toolwire.errors import HTTPStatusError, TransportError
from toolwire.events import MessageEnd, ToolCallStart, Usage
from toolwire.history import ToolResultPart
from toolwire.tools import describers
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.translate import ResponseTranslator

log = logging.getLogger("toolwire.agent")


@dataclass(slots=True)
class Step:
    """One model response and the calls it made, until it is saved."""

    collector: ResponseCollector
    translator: ResponseTranslator
    guard: IdGuard
    results: dict[str, ToolResultPart] = field(default_factory=dict)
    tail: list[dict[str, Any]] = field(default_factory=list)


class Requests:
    """The model requests of one session: what is sent, to which backend (module doc)."""

    __slots__ = ("runtime", "session")

    def __init__(self, session: Session, runtime: Runtime) -> None:
        self.session = session
        self.runtime = runtime

    def build(self, gauge: ContextMeter) -> tuple[ModelRequest, int]:
        """The next request, and its raw token estimate (``gauge.estimate`` corrects it)."""
        session = self.session
        shape = request_shape(session, self.runtime.config)
        request = ModelRequest(
            system=shape.system,
            messages=tuple(session.conversation.request()),
            tools=shape.tools,
            max_tokens=gauge.window.reserved,
            cache=shape.cache,
            thinking=shape.thinking,
            web_search=shape.web_search,
        )
        return request, estimate_request(request.system, request.messages, request.tools)

    def backend(self) -> TappableBackend:
        """The backend answering the session, made at its first request (``ConfigError``
        when it cannot be used, e.g. its key is not set)."""
        session = self.session
        if session.model.backend is None:
            config = self.runtime.config
            made = create_backend(
                config.backend(session.model.active),
                config.limits,
                record=self.runtime.record,
                client=self.runtime.http,
            )
            session.model.answering(made)
            return made
        return session.model.backend

    def new_step(self, engine: UpdateEngine) -> Step:
        """A step for the next response: its translator names the session's MCP tools too."""
        translator = ResponseTranslator(
            engine,
            cwd=self.session.who.cwd,
            tail_bytes=self.runtime.config.limits.max_live_output_bytes,
            describers={**describers(), **mcp_calls.describers(self.session), TASK: describe_task},
        )
        return Step(ResponseCollector(), translator, IdGuard(self.session.services.call_ids))

    def record_issued(self, call_id: str) -> None:
        """Record an issued id now, for a crash before the step is saved (which records it
        again). Not awaited: a lock another window holds must not stall the stream."""
        sid, store = self.session.id, self.runtime.store
        task = asyncio.ensure_future(store.call(lambda db: db.add_call_ids(sid, [call_id])))
        task.add_done_callback(_logged)

    async def note_refused(
        self, backend: TappableBackend, request: ModelRequest, exc: HTTPStatusError
    ) -> str | None:
        """After the provider refused an image of ``request``: that image (every image, when
        the provider does not say which) becomes its one-line note in the history as stored,
        so the next request, and a ``session/load`` in another process, go without it. The
        line to tell the user; None when the refusal is about anything else."""
        refusal = block_refusal(exc.status, exc.message, exc.code, exc.param)
        if refusal is None:
            return None
        inner = backend.inner if isinstance(backend, RecordingBackend) else backend
        body = inner.build_body(request) if isinstance(inner, HTTPBackend) else None
        sources = None if body is None else refused_images(body, refusal)
        session = self.session
        history, count = noted(session.history, sources, refusal.reason)
        if count == 0 and sources is not None:  # the block is not the history's: all images
            sources = None
            history, count = noted(session.history, sources, refusal.reason)
        if count == 0:
            return None  # no image to blame: the request is refused as it is
        pairs = zip(session.history, history, strict=True)
        sid, changes = session.id, [(old, new) for old, new in pairs if old != new]
        await self.runtime.store.call(lambda db: db.replace_parts(sid, changes))
        session.history[:] = history
        return _refused_text(refusal.reason, count, named=sources is not None)


async def stream_step(
    backend: TappableBackend,
    request: ModelRequest,
    step: Step,
    ticker: Ticker,
    session: Session,
    issued: Callable[[str], None],
) -> Usage | None:
    """Stream one response to the editor; its usage, when the provider reported it.
    ``issued`` hears each new tool call id as it is handed out."""
    usage = None
    async with contextlib.aclosing(backend.stream(request)) as events:
        async for event in events:
            step.collector.feed(event)
            if isinstance(event, MessageEnd):
                usage = event.usage
            unique = step.guard.event(event)
            if isinstance(unique, ToolCallStart):
                issued(unique.id)
            ticker.send(step.translator.feed(unique))
            await session.services.outbox.drain()
    return usage


def failure_text(backend: TappableBackend, exc: TransportError, *, overflow: bool) -> str:
    """What the user is told when a request failed before its first byte."""
    text = f"The request to {backend.name} ({backend.model}) failed: {exc}"
    if overflow:
        text += (
            " It is still too long after compacting the conversation; "
            "/compact with a focus, or a model with a larger window, may help."
        )
    return text


def _refused_text(reason: str, count: int, *, named: bool) -> str:
    """What the user is told about ``count`` images replaced by notes; ``named`` when the
    provider said which block it refused."""
    said = f"The model refused an image ({reason})"
    if named and count == 1:
        said += "; it was replaced by a note"
    elif named:
        said += f"; the {count} images of its block were replaced by notes"
    elif count == 1:
        said += " without saying which; the conversation's one image was replaced by a note"
    else:
        said += f" without saying which; the conversation's {count} images were replaced by notes"
    return said + " and the request was sent again.\n\n"


def _logged(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.warning("could not record a tool call id yet (the step's save will): %s", exc)


__all__ = [
    "Requests",
    "Step",
    "failure_text",
    "stream_step",
]
