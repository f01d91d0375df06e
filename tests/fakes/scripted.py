"""A fake upstream of either family (Anthropic Messages or OpenAI Chat) that plays one
scripted coding task, and refuses, with a 400 in its API's shape, any request its API
would refuse: a body the official SDK's request type rejects, a tool definition the
provider refuses (``tests/backends/tool_rules.py``), or a tool call left unanswered or an
answer to no call.

The task is a list of tool calls, one per request, then a closing text; a request that
offers no tools (opencode asks for a session title so) gets a short text instead. Which step a
request is at is the number of tool results it carries, so the fake keeps no state and a
client that retries or resends its history gets the same answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pydantic
from anthropic.types import ContentBlockParam, MessageParam
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

from tests.backends.tool_rules import anthropic_violations, chat_violations
from tests.fakes.http import Received, Reply
from tests.fakes.leaky import results_in
from tests.proxy.dialect_support import calls_reply, text_reply

TITLE = "A title"  # the answer to a request offering no tools (a CLI's side request)
Call = tuple[str, str, dict[str, Any]]  # id, tool name, arguments
# A request type's ``Iterable`` fields are checked only when iterated: each message too.
_ANTHROPIC = pydantic.TypeAdapter(MessageCreateParamsStreaming)
_ANTHROPIC_MESSAGE = pydantic.TypeAdapter(MessageParam)
_ANTHROPIC_BLOCK = pydantic.TypeAdapter(ContentBlockParam)
_CHAT = pydantic.TypeAdapter(CompletionCreateParamsStreaming)
_CHAT_MESSAGE = pydantic.TypeAdapter(ChatCompletionMessageParam)


def _sdk(adapter: pydantic.TypeAdapter[Any], body: Any) -> list[str]:
    try:
        adapter.validate_python(body)
    except pydantic.ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3]]
    return []


def anthropic_problems(body: dict[str, Any]) -> list[str]:
    """Why Anthropic's Messages API would refuse ``body`` (empty: it would take it)."""
    out = _sdk(_ANTHROPIC, body)
    out += [p for m in body.get("messages", []) for p in _sdk(_ANTHROPIC_MESSAGE, m)]
    for tool in body.get("tools", []):
        out += anthropic_violations(tool)
    messages = body.get("messages", [])
    if messages and messages[0].get("role") != "user":
        out.append("the first message must be the user's")
    asked: set[str] = set()
    for n, message in enumerate(messages):
        blocks = message.get("content")
        blocks = blocks if isinstance(blocks, list) else []
        out += [p for b in blocks for p in _sdk(_ANTHROPIC_BLOCK, b)]
        answered = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
        if message.get("role") == "user" and answered != asked and (answered or asked):
            out.append(f"messages.{n}: tool_use ids {sorted(asked)} answered by {answered}")
        asked = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    if asked:
        out.append("the last message has tool_use blocks without results")
    return out


def chat_problems(body: dict[str, Any]) -> list[str]:
    """Why OpenAI's Chat Completions API would refuse ``body``."""
    out = _sdk(_CHAT, body)
    out += [p for m in body.get("messages", []) for p in _sdk(_CHAT_MESSAGE, m)]
    for tool in body.get("tools", []):
        out += chat_violations(tool)
    waiting: set[str] = set()
    for n, message in enumerate(body.get("messages", [])):
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in waiting:
                out.append(f"messages.{n}: a tool message answering no pending call")
            waiting.discard(message.get("tool_call_id"))
            continue
        if waiting:
            out.append(f"messages.{n}: tool calls {sorted(waiting)} have no tool messages")
        waiting = {c["id"] for c in message.get("tool_calls") or []}
    return out


def task(family: str, calls: list[Call], done: str) -> Callable[[Received], Reply]:
    """The upstream's answers: ``calls`` one by one, then ``done``; a 400 for a request the
    real API would refuse (the problems also go in the body, for the test's failure)."""
    check = anthropic_problems if family == "anthropic" else chat_problems

    def respond(received: Received) -> Reply:
        problems = check(received.json())
        if problems:
            return _refusal(family, "; ".join(problems))
        if not received.json().get("tools"):
            return text_reply(family, TITLE)
        step = results_in(received)
        if step < len(calls):
            return calls_reply(family, [calls[step]])
        return text_reply(family, done)

    return respond


def _refusal(family: str, message: str) -> Reply:
    error = {"type": "invalid_request_error", "message": message}
    body: dict[str, Any] = {"type": "error", "error": error} if family == "anthropic" else {}
    body = body or {"error": {**error, "code": None}}
    return Reply(400, [json.dumps(body).encode()], content_type="application/json")


def problems_seen(family: str, requests: list[Received]) -> list[str]:
    """Every API problem in the requests an upstream of ``family`` received."""
    check = anthropic_problems if family == "anthropic" else chat_problems
    return [p for r in requests if r.method == "POST" for p in check(r.json())]
