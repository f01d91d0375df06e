"""Tool calls as text, for models served without native tool calling.

With ``tool_format`` set to a text format (``toolwire.decode.textformats``: ``hermes``,
``qwen3-coder``, ``llama3_json``...) a backend sends no native tool definitions: the tools
and the exact markup to call them are described in the system prompt, past calls are
written back into the assistant's text in that markup (the format's ``render``), results
go back as user text, and the model's reply runs through the format's decoder, so callers
get the same ``ToolCallStart`` / ``ToolCallDelta`` / ``ToolCallEnd`` events as from a
native backend.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable

from toolwire.config.choices import ToolFormat
from toolwire.decode.textformats import TextDecoder, renderer, text_decoder, text_format
from toolwire.events import Event, MessageEnd, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from toolwire.history import Message, TextPart, ToolCallPart, ToolResultPart, ToolSpec
from toolwire.history.pairing import as_object, repair


def tool_prompt(fmt: ToolFormat, tools: Iterable[ToolSpec]) -> str:
    """The system-prompt section that describes the tools and how to call them."""
    spec = text_format(fmt)
    syntax = renderer(fmt)("NAME", {"ARGUMENT": "value"})
    lines = [
        "# Tools",
        "",
        "You can call the tools listed below. To call one, write this markup in your reply:",
        "",
        syntax,
        "",
        spec.rules,
        "You may make several calls in a row. After your calls, stop and wait: each result "
        f"comes back in the next user message inside <{spec.result_tag}> tags. "
        "Never write a result yourself.",
        "",
        "## Available tools",
    ]
    for tool in tools:
        schema = json.dumps(tool.input_schema or {"type": "object"}, ensure_ascii=False)
        lines += ["", f"### {tool.name}", tool.description.strip(), f"Parameters: {schema}"]
    return "\n".join(lines)


def render_call(fmt: ToolFormat, call: ToolCallPart) -> str:
    """A past call written back in the markup the model was told to use."""
    return renderer(fmt)(call.name, as_object(call.arguments))


def render_result(fmt: ToolFormat, result: ToolResultPart) -> str:
    """A tool result as user text."""
    tag = text_format(fmt).result_tag
    status = "error" if result.is_error else "ok"
    return f'<{tag} name="{result.name}" status="{status}">\n{result.content}\n</{tag}>'


def to_text_history(messages: Iterable[Message], fmt: ToolFormat) -> list[Message]:
    """The history with every call and result turned into text in the markup ``fmt``."""
    out: list[Message] = []
    for message in repair(messages):
        if message.role == "tool":
            results = [p for p in message.parts if isinstance(p, ToolResultPart)]
            text = "\n".join(render_result(fmt, r) for r in results)
            out.append(Message("user", (TextPart(text),)))
            continue
        parts = tuple(
            TextPart(render_call(fmt, p)) if isinstance(p, ToolCallPart) else p
            for p in message.parts
        )
        out.append(Message(message.role, parts, message.backend))
    return out


def tag_decoder(fmt: ToolFormat, tools: Iterable[ToolSpec]) -> TextDecoder:
    """A fresh tag decoder for ``fmt``, given the offered tools (docs/decoding.md)."""
    return text_decoder(fmt, {t.name: t.input_schema for t in tools})


class TagAdapter:
    """Provider events in, the same events with tool calls parsed out of the text.

    The tag decoders number calls ``call_0``, ``call_1``... in every response; a history
    needs ids unique across turns, so each response's calls get a random prefix. When
    calls were found, a normal end becomes ``tool_use`` (a cut response stays cut).
    """

    def __init__(self, fmt: ToolFormat, tools: Iterable[ToolSpec]) -> None:
        self._tags = tag_decoder(fmt, tools)
        self._prefix = f"call_{secrets.token_hex(4)}_"
        self._ids: dict[str, str] = {}

    def events(self, events: Iterable[Event]) -> list[Event]:
        """Translate one batch of provider events."""
        out: list[Event] = []
        for event in events:
            if isinstance(event, TextDelta):
                out += self._rename(self._tags.feed(event.text))
            elif isinstance(event, MessageEnd):
                out += self._rename(self._tags.close())
                stop = event.stop_reason
                if self._ids and stop in ("end_turn", "stop_sequence"):
                    stop = "tool_use"
                out.append(MessageEnd(stop, event.usage))
            else:
                out.append(event)
        return out

    def _rename(self, events: list[Event]) -> list[Event]:
        out: list[Event] = []
        ids = self._ids
        for ev in events:
            if isinstance(ev, ToolCallStart):
                new = ids[ev.id] = f"{self._prefix}{len(ids)}"
                out.append(ToolCallStart(new, ev.name, ev.index, ev.signature))
            elif isinstance(ev, ToolCallDelta):
                out.append(ToolCallDelta(ids.get(ev.id, ev.id), ev.text, ev.fields, ev.values))
            elif isinstance(ev, ToolCallEnd):
                out.append(ToolCallEnd(ids.get(ev.id, ev.id), ev.arguments, ev.error, ev.raw))
            else:
                out.append(ev)
        return out


__all__ = [
    "TagAdapter",
    "render_call",
    "render_result",
    "tag_decoder",
    "to_text_history",
    "tool_prompt",
]
