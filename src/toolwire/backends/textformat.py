"""Tool calls as text, for models served without native tool calling.

With ``tool_format`` = ``xml-tags`` | ``hermes`` | ``qwen3-coder`` a backend sends no
native tool definitions: the tools and the exact markup to call them are described in
the system prompt, past calls are written back into the assistant's text in that markup,
results go back as user text, and the model's reply runs through the matching tag
decoder (``toolwire.decode.tags``), so callers get the same ``ToolCallStart`` /
``ToolCallDelta`` / ``ToolCallEnd`` events as from a native backend.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from typing import Any

from toolwire.config.choices import ToolFormat
from toolwire.decode import TextDecoder
from toolwire.decode.tags import HermesDecoder, Qwen3CoderDecoder, XmlTagsDecoder
from toolwire.events import Event, MessageEnd, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from toolwire.history import Message, TextPart, ToolCallPart, ToolResultPart, ToolSpec
from toolwire.history.pairing import as_object, repair

_SYNTAX = {
    "xml-tags": (
        "<tool><tool_name>NAME</tool_name><arguments>"
        "<ARGUMENT>value</ARGUMENT>...</arguments></tool>",
        "Each argument is an element named after it. Write a value as plain text; put a "
        "value holding <, & or meaningful surrounding whitespace (code, file contents) in "
        "<![CDATA[...]]>. An object argument is an element with child elements; a list "
        "repeats its element once per item.",
    ),
    "hermes": (
        '<tool_call>\n{"name": "NAME", "arguments": {"ARGUMENT": value, ...}}\n</tool_call>',
        "The arguments are one JSON object matching the tool's parameter schema.",
    ),
    "qwen3-coder": (
        "<tool_call>\n<function=NAME>\n<parameter=ARGUMENT>\nvalue\n</parameter>\n"
        "</function>\n</tool_call>",
        "Write one <parameter=...> block per argument. A string value is written as is, "
        "on its own lines; any other value as JSON.",
    ),
}
_RESULT_TAG = {"xml-tags": "tool_result", "hermes": "tool_response", "qwen3-coder": "tool_response"}


def tool_prompt(fmt: ToolFormat, tools: Iterable[ToolSpec]) -> str:
    """The system-prompt section that describes the tools and how to call them."""
    syntax, rules = _SYNTAX[fmt]
    lines = [
        "# Tools",
        "",
        "You can call the tools listed below. To call one, write this markup in your reply:",
        "",
        syntax,
        "",
        rules,
        "You may make several calls in a row. After your calls, stop and wait: each result "
        f"comes back in the next user message inside <{_RESULT_TAG[fmt]}> tags. "
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
    args = as_object(call.arguments)
    if fmt == "hermes":
        body = json.dumps({"name": call.name, "arguments": args}, ensure_ascii=False)
        return f"<tool_call>\n{body}\n</tool_call>"
    if fmt == "qwen3-coder":
        params = "".join(
            f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
            for k, v in args.items()
        )
        return f"<tool_call>\n<function={call.name}>\n{params}</function>\n</tool_call>"
    inner = "".join(_xml_element(k, v) for k, v in args.items())
    return f"<tool><tool_name>{call.name}</tool_name><arguments>{inner}</arguments></tool>"


def _xml_element(name: str, value: Any) -> str:
    if isinstance(value, list):
        return "".join(_xml_element(name, item) for item in value)
    if isinstance(value, dict):
        inner = "".join(_xml_element(k, v) for k, v in value.items())
        return f"<{name}>{inner}</{name}>"
    text = value if isinstance(value, str) else json.dumps(value)
    if any(c in text for c in "<&") or text != text.strip():
        # CDATA keeps code verbatim; a "]]>" inside is split across two sections.
        text = "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"
    return f"<{name}>{text}</{name}>"


def render_result(fmt: ToolFormat, result: ToolResultPart) -> str:
    """A tool result as user text."""
    tag = _RESULT_TAG[fmt]
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
    schemas = {t.name: t.input_schema for t in tools}
    if fmt == "hermes":
        return HermesDecoder(schemas)
    if fmt == "qwen3-coder":
        return Qwen3CoderDecoder(schemas)
    return XmlTagsDecoder()


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
