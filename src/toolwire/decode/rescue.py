"""Rescue: tool calls a server leaked into the text or the reasoning become real calls.

A backend asked for native tool calls sometimes gets the call back as text: the server's
tool-call parser is missing, misconfigured or wrong for the model (Ollama's qwen3-coder
without its opening ``<tool_call>``, a Hermes call inside ``reasoning_content``).
``Rescue`` is a pure transform over a response's normalized events: it watches the text
and the thinking (``_rescue_watch.Watch``, one each) for a call of a **declared** tool in
any candidate format and turns it into ``ToolCallStart`` / ``ToolCallDelta`` /
``ToolCallEnd``, started as early as the format allows. The markup that carried it never
reaches the user; a normal end becomes ``tool_use``; ``notice`` gets one line per
response naming what the server did wrong (docs/decoding.md, "Rescue").

What stays text: a format's markup in prose or in code the model shows (code spans and
fenced blocks are not read), a call of an undeclared tool, markup whose arguments do not
begin as a call's do, and anything a candidate format does not accept.

Candidates are ``(name, factory)`` pairs: a factory builds a fresh text decoder for the
declared tools. ``CANDIDATES`` are today's; another format joins by its factory.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from toolwire.decode import TextDecoder
from toolwire.decode._rescue_watch import Factory, Watch, Win
from toolwire.decode.tags import HarmonyDecoder, HermesDecoder, Qwen3CoderDecoder, XmlTagsDecoder
from toolwire.decode.tags.llama_leak import LlamaJsonLeak
from toolwire.events import (
    Event,
    MessageEnd,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)


def _hermes(tools: Mapping[str, Any]) -> TextDecoder:
    # Only the ``<tool_call>`` token: the lenient forms (a bare JSON object at a line
    # start, a fenced one) are too easily an example in a native backend's answer.
    return HermesDecoder()


def _qwen3_coder(tools: Mapping[str, Any]) -> TextDecoder:
    # With the tools: the call without its opening ``<tool_call>`` (Ollama) is read too.
    return Qwen3CoderDecoder(tools)


def _xml(tools: Mapping[str, Any]) -> TextDecoder:
    return XmlTagsDecoder()


def _llama_json(tools: Mapping[str, Any]) -> TextDecoder:
    return LlamaJsonLeak(tools)


def _harmony(tools: Mapping[str, Any]) -> TextDecoder:
    # gpt-oss behind a server that does not parse harmony: the call's header in content.
    return HarmonyDecoder(tools)


CANDIDATES: tuple[tuple[str, Factory], ...] = (
    ("hermes", _hermes),
    ("qwen3-coder", _qwen3_coder),
    ("xml-tags", _xml),
    ("llama-json", _llama_json),
    ("openai_harmony", _harmony),
)
"""The formats a rescue looks for, in order of preference."""

Notice = Callable[[str], None]


class Rescue:
    """A response's events in, the same events with leaked calls lifted out.

    ``tools``: the declared tools (name -> parameters schema); a call of any other name
    stays text. ``source``: who answered, for the notice (``backend 'local' at
    localhost:11434``). Feed each batch to ``events``; the ``MessageEnd`` closes it.
    """

    def __init__(
        self,
        tools: Mapping[str, Any],
        *,
        candidates: Sequence[tuple[str, Factory]] = CANDIDATES,
        source: str = "the server",
        notice: Notice | None = None,
    ) -> None:
        self._tools = tools
        self._candidates = candidates
        self._source = source
        self._notice = notice
        self._text = Watch(candidates, tools)
        self._thinking = Watch(candidates, tools)
        self._prefix = f"call_{secrets.token_hex(4)}_"
        self._ids: dict[tuple[Watch, str], str] = {}
        self._json: dict[str, bool | None] = {}  # per rescued call: its pieces are JSON
        self._starts = 0
        self.rescued: list[tuple[str, str]] = []
        """Each rescued call's format and where it was (``text`` or ``reasoning``)."""

    def events(self, events: Iterable[Event]) -> list[Event]:
        """Translate one batch of the response's events."""
        out: list[Event] = []
        for event in events:
            if isinstance(event, TextDelta):
                out += self._watched(self._text, *self._text.feed(event.text))
            elif isinstance(event, ThinkingDelta) and not event.redacted:
                if event.text:
                    out += self._watched(self._thinking, *self._thinking.feed(event.text))
                if event.signature is not None:  # the thinking block ends: its text first
                    out += self._flush(text=False)
                    out.append(ThinkingDelta("", event.signature))
            elif isinstance(event, ToolCallStart):
                out += self._flush()
                out.append(self._native(event))
            elif isinstance(event, MessageEnd):
                out += self._flush()
                out.append(self._end(event))
            else:
                out.append(event)
        return out

    def _flush(self, *, text: bool = True) -> list[Event]:
        """Close the watches: the response moved on (a native call, its end) or, with
        ``text=False``, the thinking block ended (its signature came)."""
        out = self._watched(self._thinking, *self._thinking.close())
        self._thinking = Watch(self._candidates, self._tools)
        if text:
            out += self._watched(self._text, *self._text.close())
            self._text = Watch(self._candidates, self._tools)
        return out

    def _native(self, event: ToolCallStart) -> ToolCallStart:
        index, self._starts = self._starts, self._starts + 1
        if index == event.index:
            return event
        return ToolCallStart(event.id, event.name, index, event.signature, event.server)

    def _end(self, event: MessageEnd) -> MessageEnd:
        if self.rescued and event.stop_reason in ("end_turn", "stop_sequence"):
            return MessageEnd("tool_use", event.usage)
        return event

    def _watched(self, watch: Watch, events: list[Event], win: Win | None) -> list[Event]:
        """A watch's events as the response's: its text as text or thinking, its calls
        under ids unique across turns, numbered after the calls before them."""
        if win is not None:
            self._announce(win.lane.name, "reasoning" if watch is self._thinking else "text")
        thinking = watch is self._thinking
        out: list[Event] = []
        for ev in events:
            if isinstance(ev, TextDelta):
                out.append(ThinkingDelta(ev.text) if thinking else ev)
            elif isinstance(ev, ToolCallStart):
                new = self._ids[(watch, ev.id)] = f"{self._prefix}{self._starts}"
                self._json[new] = None
                out.append(ToolCallStart(new, ev.name, self._starts))
                self._starts += 1
            elif isinstance(ev, ToolCallDelta | ToolCallEnd):
                out += self._as_json(self._ids.get((watch, ev.id), ev.id), ev)
            # A format's own complaint about markup it could not read is not the user's
            # concern here: that markup stays text.
        return out

    def _as_json(self, new: str, event: ToolCallDelta | ToolCallEnd) -> list[Event]:
        """A rescued call's argument pieces as a native call's: JSON text. A format that
        writes markup (Qwen3-Coder, XML) sends its fields as they complete, and the
        arguments as JSON when the call ends."""
        kind = self._json.get(new)
        if isinstance(event, ToolCallEnd):
            out: list[Event] = []
            if kind is not True and event.ok:
                out.append(ToolCallDelta(new, json.dumps(event.arguments, ensure_ascii=False)))
            return [*out, ToolCallEnd(new, event.arguments, event.error, event.raw)]
        if kind is None and event.text.strip():
            kind = self._json[new] = event.text.lstrip()[0] == "{"
        if kind is False:
            if not event.fields:
                return []
            return [ToolCallDelta(new, "", event.fields, event.values)]
        if kind is None and not event.fields:
            return []  # whitespace before the arguments say what they are
        return [ToolCallDelta(new, event.text, event.fields, event.values)]

    def _announce(self, fmt: str, where: str) -> None:
        first = not self.rescued
        self.rescued.append((fmt, where))
        if first and self._notice is not None:
            field = "reasoning_content" if where == "reasoning" else "content"
            self._notice(
                f"{self._source} sent a tool call as {fmt} markup in `{field}` instead of in "
                "`tool_calls` (its tool-call parser is missing or wrong for this model); "
                'toolwire rescued it (rescue = "auto"; set rescue = "off" to see the text)'
            )


__all__ = ["CANDIDATES", "Notice", "Rescue"]
