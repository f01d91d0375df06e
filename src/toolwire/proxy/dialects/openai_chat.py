"""OpenAI Chat Completions in: ``POST /v1/chat/completions``, streamed or not.

The importer reads ``messages`` (system and developer text, user text and images, the
assistant's ``tool_calls``, ``tool`` results), ``tools``, ``tool_choice``,
``max_completion_tokens``/``max_tokens``, ``temperature`` and ``reasoning_effort``.
The encoder streams ``chat.completion.chunk``s: a call's ``id`` and name in its first
chunk, its arguments as they arrive, ``finish_reason``, then the usage chunk when
``stream_options.include_usage`` asks for it, and ``[DONE]``.
"""

from __future__ import annotations

import json
import time
import uuid
from functools import partial
from typing import Any

from starlette.requests import Request

from toolwire.events import (
    Event,
    MessageEnd,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolwire.proxy.asks import OUTPUT_KEY
from toolwire.proxy.dialects.base import (
    DialectError,
    DialectRelay,
    DialectRoute,
    Imported,
    Keeper,
    Payload,
    importing,
)
from toolwire.proxy.dialects.openai_asks import allowed, chat_format, forced_choice, stop_list
from toolwire.proxy.dialects.openai_common import (
    append,
    arguments,
    arguments_text,
    content_text,
    error_body,
    finish_reason,
    function_tool,
    image_block,
    need_model,
    planner_body,
    session,
    sse,
    tokens,
    with_effort,
)
from toolwire.proxy.errors import ProxyError
from toolwire.proxy.relay import Answering, Relay

_DONE = b"data: [DONE]\n\n"
_string = json.encoder.encode_basestring  # a str as JSON, not escaped to ASCII


def import_chat(body: Any, headers: Any) -> Payload:
    """A Chat Completions request in the planner's form."""
    body = need_model(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise DialectError("messages: a non-empty list is required", "messages")
    system: list[str] = []
    out: list[Payload] = []
    for number, message in enumerate(messages):
        param = f"messages[{number}]"
        if not isinstance(message, dict):
            raise DialectError("a message must be an object", param)
        role = message.get("role")
        if role in ("system", "developer"):
            text = content_text(message.get("content"))
            if out:  # mid-conversation: the planner makes it user text
                out.append({"role": "system", "content": text})
            else:
                system.append(text)
        else:
            append(out, *_message(message, role, param))
    first = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
    planned = planner_body(
        body,
        session(body, headers, first),
        system="\n\n".join(t for t in system if t),
        messages=out,
        tools=_tools(body.get("tools"), body.get("tool_choice")),
        max_tokens=body.get("max_completion_tokens", body.get("max_tokens")),
    )
    planned.update(_asks(body))
    return with_effort(planned, body.get("reasoning_effort"))


def _asks(body: Payload) -> Payload:
    """``tool_choice``, ``stop`` and ``response_format`` in the planner's form; ``n``
    above 1 refused (one stream carries one choice)."""
    count = body.get("n")
    if count is not None and count != 1:
        raise DialectError(
            "n: the proxy answers with one choice per request; leave n out (or 1) and "
            "send one request per choice",
            "n",
        )
    out: Payload = {}
    choice = forced_choice(body.get("tool_choice"), "tool_choice", nested=True)
    if choice is not None:
        out["tool_choice"] = choice
    if body.get("stop") is not None:
        out["stop_sequences"] = list(stop_list(body["stop"], "stop"))
    output = chat_format(body.get("response_format"))
    if output is not None:
        out[OUTPUT_KEY] = output
    return out


def _message(message: Payload, role: Any, param: str) -> tuple[str, list[Payload]]:
    """One message as (the planner's role, its blocks)."""
    content = message.get("content")
    if role == "user":
        return "user", _user_blocks(content, param)
    if role == "tool":
        call = message.get("tool_call_id")
        if not isinstance(call, str) or not call:
            raise DialectError("a tool message needs tool_call_id", f"{param}.tool_call_id")
        return "user", [
            {"type": "tool_result", "tool_use_id": call, "content": content_text(content)}
        ]
    if role != "assistant":
        raise DialectError(f"unknown role {role!r}", f"{param}.role")
    blocks: list[Payload] = []
    text = content_text(content) or str(message.get("refusal") or "")
    if text:
        blocks.append({"type": "text", "text": text})
    for n, call in enumerate(message.get("tool_calls") or []):
        where = f"{param}.tool_calls[{n}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str):
            raise DialectError("a tool call needs an id and a function", where)
        args = arguments(function.get("arguments"), f"{where}.function.arguments")
        name = str(function.get("name", ""))
        blocks.append({"type": "tool_use", "id": call["id"], "name": name, "input": args})
    return "assistant", blocks


def _user_blocks(content: Any, param: str) -> list[Payload]:
    if not isinstance(content, list):
        return [{"type": "text", "text": content_text(content)}]
    blocks: list[Payload] = []
    for n, part in enumerate(content):
        if isinstance(part, dict) and part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            blocks.append(image_block(url, f"{param}.content[{n}].image_url"))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
    return blocks


def _tools(tools: Any, choice: Any) -> list[Payload]:
    """The function tools offered (``tool_choice`` ``none``: none; ``allowed_tools``:
    those it names)."""
    if choice == "none" or not isinstance(tools, list):
        return []
    out = []
    for n, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict):
            get = function.get
            out.append(
                function_tool(get("name"), get("description"), get("parameters"), f"tools[{n}]")
            )
    return allowed(out, choice)


class ChatEncoder:
    """One answer as Chat Completions chunks, or as one ``chat.completion``."""

    def __init__(self, answering: Answering, *, usage: bool) -> None:
        self.model, self._answering, self._usage = answering.model, answering, usage
        self._json_args = answering.json_args
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.done = self.stopped = False
        self.failure: str | None = None
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: dict[str, Payload] = {}
        self._args: dict[str, list[str]] = {}  # joined when the call ends, not copied per delta
        self._end: MessageEnd | None = None
        # The hot path, a text chunk, is framed from this chunk's bytes around its text.
        empty = self._chunk({"content": ""})
        head, _, tail = empty.partition(b'"content": ""')
        self._text_frame = (head + b'"content": ', tail)

    def start(self) -> bytes:
        return self._chunk({"role": "assistant", "content": ""})

    def feed(self, event: Event) -> bytes:
        if self.done:
            return b""
        if isinstance(event, TextDelta) and event.text:
            self._text.append(event.text)
            try:
                text = _string(event.text).encode()
            except UnicodeEncodeError:  # a lone surrogate: the slow path makes it U+FFFD
                return self._chunk({"content": event.text})
            return self._text_frame[0] + text + self._text_frame[1]
        if isinstance(event, ThinkingDelta) and event.text:
            self._thinking.append(event.text)
            return self._chunk({"reasoning_content": event.text})
        if isinstance(event, ToolCallStart | ToolCallDelta | ToolCallEnd):
            return self._call(event)
        if isinstance(event, StreamError):
            self.failure, self.done = event.message, True
            return sse(error_body(ProxyError(event.message)))
        if isinstance(event, MessageEnd):
            return self._ended(event)
        return b""

    def _call(self, event: ToolCallStart | ToolCallDelta | ToolCallEnd) -> bytes:
        if isinstance(event, ToolCallStart):
            if event.server:
                return b""
            function: Payload = {"name": event.name, "arguments": ""}
            call: Payload = {"index": len(self._calls), "id": event.id, "type": "function"}
            self._calls[event.id] = call | {"function": function}
            return self._chunk({"tool_calls": [self._calls[event.id]]})
        found = self._calls.get(event.id)
        if found is None:
            return b""
        if isinstance(event, ToolCallDelta):
            if not (event.text and self._json_args):
                return b""
            self._args.setdefault(event.id, []).append(event.text)
            piece = event.text
        else:  # the end: arguments not streamed as JSON go whole
            streamed = "".join(self._args.pop(event.id, ()))
            if self._json_args and streamed:
                found["function"]["arguments"] = streamed
                return b""
            piece = arguments_text(event.arguments) if event.ok else event.raw or ""
            found["function"]["arguments"] = piece
        return self._chunk(
            {"tool_calls": [{"index": found["index"], "function": {"arguments": piece}}]}
        )

    def _ended(self, event: MessageEnd) -> bytes:
        self.done = True
        if event.stop_reason == "error":
            return b""  # the StreamError before it said what happened
        self.stopped, self._end = True, event
        out = self._chunk({}, finish_reason(event, saw_calls=bool(self._calls)))
        if self._usage:
            out += sse(self._frame([]) | {"usage": self._usage_body()})
        return out + _DONE

    def _usage_body(self) -> Payload:
        given, produced, cached, reasoning = tokens(self._end, self._answering)
        return {
            "prompt_tokens": given,
            "completion_tokens": produced,
            "total_tokens": given + produced,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        }

    def _frame(self, choices: list[Payload]) -> Payload:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }

    def _chunk(self, delta: Payload, finish: str | None = None) -> bytes:
        return sse(self._frame([{"index": 0, "delta": delta, "finish_reason": finish}]))

    def result(self) -> Payload:
        message: Payload = {"role": "assistant", "content": "".join(self._text) or None}
        if self._thinking:
            message["reasoning_content"] = "".join(self._thinking)
        if self._calls:
            message["tool_calls"] = [
                {k: v for k, v in c.items() if k != "index"} for c in self._calls.values()
            ]
        end = self._end or MessageEnd("end_turn")
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": finish_reason(end, saw_calls=bool(self._calls)),
        }
        frame = self._frame([choice]) | {"object": "chat.completion", "usage": self._usage_body()}
        return frame


class OpenAIChat:
    """The Chat Completions dialect."""

    name = "chat"

    @property
    def routes(self) -> tuple[DialectRoute, ...]:
        return (DialectRoute("/v1/chat/completions", importing(self.imported)),)

    def error(self, exc: ProxyError) -> Payload:
        return error_body(exc)

    async def imported(self, body: Any, request: Request, keeper: Keeper) -> Imported:
        planned = import_chat(body, request.headers)
        options = body.get("stream_options")
        usage = isinstance(options, dict) and options.get("include_usage") is True
        return Imported(planned, partial(_relay, usage=usage))


def _relay(answering: Answering, *, usage: bool) -> Relay:
    return DialectRelay(partial(ChatEncoder, answering, usage=usage))


__all__ = ["ChatEncoder", "OpenAIChat", "import_chat"]
