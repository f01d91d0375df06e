"""One model response, as ACP notifications: decoded events -> lifecycles -> engine.

``ResponseTranslator`` is the glue between the decode core and the update engine, and
is what ``toolwire updates`` runs: text and thinking become message chunks, each tool
call gets a ``ToolCallLifecycle`` (its ``tool_call`` on ``ToolCallStart``, refined
title/locations as fields complete, ``rawInput`` when the arguments end), and the end of
the response, or a stream error, flushes whatever is held. Sans-IO, like the engine.

No tool is run here: a call whose arguments completed stays ``pending`` (awaiting
execution or permission, which the agent drives through ``calls``); a call whose
arguments failed to parse or were cut ends ``failed`` with the error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, assert_never

from toolwire.errors import LifecycleError
from toolwire.events import (
    Event,
    MessageEnd,
    StopReason,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.lifecycle import ToolCallLifecycle
from toolwire.updates.output import DEFAULT_RESULT_BYTES, DEFAULT_TAIL_BYTES
from toolwire.updates.titles import Describer
from toolwire.updates.wire import Notification, resource_link_content


class ResponseTranslator:
    """Feeds one response's decoded events through lifecycles into an ``UpdateEngine``."""

    def __init__(
        self,
        engine: UpdateEngine,
        *,
        cwd: str,
        tail_bytes: int = DEFAULT_TAIL_BYTES,
        result_bytes: int = DEFAULT_RESULT_BYTES,
        describers: Mapping[str, Describer] | None = None,
    ) -> None:
        self.engine = engine
        self.cwd = cwd
        self.describers = describers
        self.calls: dict[str, ToolCallLifecycle] = {}
        self.stop_reason: StopReason | None = None
        self.errors: list[str] = []
        self._limits = (tail_bytes, result_bytes)
        self._server: set[str] = set()  # ids of calls the provider runs itself

    def feed(self, event: Event, now: float | None = None) -> list[Notification]:
        """The notifications this event causes (possibly none: most deltas change nothing)."""
        engine = self.engine
        match event:
            case TextDelta():
                return engine.text(event.text, now=now)
            case ThinkingDelta():
                return engine.thought(event.text, now=now)
            case ToolCallDelta():
                call = self._call(event.id)
                return engine.update(call, now=now) if call.delta(event) else []
            case ToolCallStart():
                return self._start(event, now)
            case ToolCallEnd():
                call = self._call(event.id)
                changed = call.end_arguments(event)
                if event.id in self._server and event.ok:
                    # Run by the provider, never by the agent: it ends here, completed,
                    # with the provider's result (docs/decoding.md, server-run tools).
                    call.run()
                    links = result_links(event.result)
                    changed = (
                        call.complete(content=links, raw_output=event.result)
                        if links
                        else call.complete(_result_text(event.result), raw_output=event.result)
                    )
                return engine.update(call, now=now) if changed else []
            case MessageEnd():
                self.stop_reason = event.stop_reason
                out = engine.flush(now)
                engine.end_message()
                return out
            case StreamError():
                self.errors.append(event.message)
                return engine.flush(now)
            case _:
                assert_never(event)

    def feed_all(self, events: Iterable[Event], now: float | None = None) -> list[Notification]:
        """``feed`` for each event, at the same time ``now``."""
        out: list[Notification] = []
        for event in events:
            out.extend(self.feed(event, now))
        return out

    def cancel(self, now: float | None = None) -> list[Notification]:
        """``session/cancel``: end every open call ``failed`` (cancelled), flush all."""
        open_calls = [c for c in self.calls.values() if c.stage != "end"]
        for call in open_calls:
            call.cancel()
        out = self.engine.update(*open_calls, now=now) if open_calls else []
        out.extend(self.engine.flush(now))
        return out

    def close(self, now: float | None = None) -> list[Notification]:
        """End of the turn: nothing held may be lost."""
        return self.engine.flush(now)

    def _start(self, event: ToolCallStart, now: float | None) -> list[Notification]:
        if event.id in self.calls:
            raise LifecycleError(f"tool call {event.id}: started twice")
        tail, result = self._limits
        call = ToolCallLifecycle(
            event.id,
            event.name,
            cwd=self.cwd,
            tail_bytes=tail,
            result_bytes=result,
            describers=self.describers,
        )
        self.calls[event.id] = call
        if event.server:
            self._server.add(event.id)
        return self.engine.start(call, now)

    def _call(self, call_id: str) -> ToolCallLifecycle:
        call = self.calls.get(call_id)
        if call is None:
            raise LifecycleError(f"tool call {call_id}: event before its start")
        return call


MAX_LINKS = 20
"""Links a provider-run call's card shows at most (a search answers about ten)."""


def result_links(result: Any) -> list[dict[str, Any]]:
    """The web pages a provider-run call's result names, as ``resource_link`` content:
    every object in it with an http(s) ``url`` (a search's hits, its sources), once each,
    named by its ``title`` when it has one. Empty when it names none."""
    found: dict[str, dict[str, Any]] = {}
    stack = [result]
    while stack and len(found) < MAX_LINKS:
        item = stack.pop(0)
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, Mapping):
            url = item.get("url")
            if isinstance(url, str) and url.startswith(("https://", "http://")):
                title = item.get("title")
                name = title if isinstance(title, str) and title.strip() else url
                found.setdefault(url, resource_link_content(url, name))
            stack.extend(v for v in item.values() if isinstance(v, (list, Mapping)))
    return list(found.values())


def _result_text(result: Any) -> str:
    if result is None:
        return "Run by the provider."
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


__all__ = ["MAX_LINKS", "ResponseTranslator", "result_links"]
