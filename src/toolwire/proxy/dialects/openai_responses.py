"""OpenAI Responses in: ``POST /v1/responses``, streamed or not (``responses_stream.py``).

``input`` is a string or items: ``message`` (system, developer, user text and images,
assistant text), ``function_call``/``function_call_output``, ``custom_tool_call``/
``custom_tool_call_output`` and ``reasoning`` (its ``encrypted_content`` given back to
the backend that wrote it). ``instructions`` are the system prompt. ``function`` tools
are offered as they are; a ``custom`` (freeform) tool, as Codex sends ``apply_patch``,
is offered to any backend as a function of one string ``input`` and its calls come back
as ``custom_tool_call``. ``store`` (on unless false) keeps each answer with the items
before it in the session store, under its id, so a ``previous_response_id`` continues
it on any replica sharing the store.
"""

from __future__ import annotations

import json
import uuid
from functools import partial
from typing import Any

from starlette.requests import Request

from toolwire.proxy.asks import OUTPUT_KEY
from toolwire.proxy.dialects.base import (
    DialectError,
    DialectRelay,
    DialectRoute,
    Finish,
    Imported,
    Keeper,
    NotFoundError,
    Payload,
    importing,
)
from toolwire.proxy.dialects.openai_asks import allowed, forced_choice, text_format
from toolwire.proxy.dialects.openai_common import (
    append,
    arguments,
    content_text,
    error_body,
    function_tool,
    image_block,
    need_model,
    planner_body,
    session,
    with_effort,
)
from toolwire.proxy.dialects.responses_stream import SECRET_KEY, ResponsesEncoder
from toolwire.proxy.errors import ProxyError
from toolwire.proxy.relay import Answering, Relay

_CALLS = ("function_call", "custom_tool_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_ECHOED = ("instructions", "tools", "tool_choice", "parallel_tool_calls", "max_output_tokens")
_ECHOED_TOO = ("previous_response_id", "reasoning", "temperature", "top_p", "metadata", "text")


def stored_key(response_id: str, owner: str | None) -> str:
    """The store key of a kept answer: never a session's (those hold at most one tab)."""
    return f"{owner or ''}\t\tresponse:{response_id}"


def input_items(value: Any) -> list[Payload]:
    """``input`` as items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if not isinstance(value, list):
        raise DialectError("input: a string or a list of items is required", "input")
    if not all(isinstance(item, dict) for item in value):
        raise DialectError("input: every item must be an object", "input")
    return list(value)


def planner_messages(items: list[Payload]) -> tuple[list[str], list[Payload]]:
    """(system texts, the planner's messages) of ``items``."""
    system: list[str] = []
    out: list[Payload] = []
    for number, item in enumerate(items):
        param = f"input[{number}]"
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            _message(item, param, system, out)
        elif kind in _CALLS:
            append(out, "assistant", [_call(item, param)])
        elif kind in _OUTPUTS:
            call = item.get("call_id")
            if not isinstance(call, str) or not call:
                raise DialectError("a call output needs call_id", f"{param}.call_id")
            text = content_text(item.get("output"))
            append(out, "user", [{"type": "tool_result", "tool_use_id": call, "content": text}])
        elif kind == "reasoning":
            append(out, "assistant", _reasoning(item))
        # Other items (item references, hosted tools' calls) carry nothing a backend takes.
    return system, out


def _message(item: Payload, param: str, system: list[str], out: list[Payload]) -> None:
    role, content = item.get("role"), item.get("content")
    if role in ("system", "developer"):
        if out:  # mid-conversation: the planner makes it user text
            out.append({"role": "system", "content": content_text(content)})
        else:
            system.append(content_text(content))
    elif role == "assistant":
        text = content_text(content) if isinstance(content, str) else _texts(content)
        append(out, "assistant", [{"type": "text", "text": text}] if text else [])
    elif role == "user":
        append(out, "user", _user_blocks(content, param))
    else:
        raise DialectError(f"unknown role {role!r}", f"{param}.role")


def _texts(content: Any) -> str:
    parts = content if isinstance(content, list) else []
    return "".join(
        str(p.get("text") or p.get("refusal") or "") for p in parts if isinstance(p, dict)
    )


def _user_blocks(content: Any, param: str) -> list[Payload]:
    if not isinstance(content, list):
        return [{"type": "text", "text": content_text(content)}]
    blocks: list[Payload] = []
    for n, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "input_image":
            blocks.append(image_block(part.get("image_url"), f"{param}.content[{n}]"))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "input_file":
            blocks.append({"type": "text", "text": f"[file {part.get('filename') or ''}]"})
    return blocks


def _call(item: Payload, param: str) -> Payload:
    call, name = item.get("call_id"), item.get("name")
    if not isinstance(call, str) or not call or not isinstance(name, str):
        raise DialectError("a call needs call_id and name", param)
    if item["type"] == "custom_tool_call":
        value: Any = {"input": str(item.get("input", ""))}
    else:
        value = arguments(item.get("arguments"), f"{param}.arguments")
    return {"type": "tool_use", "id": call, "name": name, "input": value}


def _reasoning(item: Payload) -> list[Payload]:
    """A reasoning item this proxy wrote, as the thinking block it came from (any other
    is opaque to every backend the proxy sends to: left out)."""
    try:
        kept = json.loads(str(item.get("encrypted_content")))
    except (ValueError, RecursionError):
        return []
    if not isinstance(kept, dict) or not isinstance(kept.get("value"), str):
        return []
    if kept.get(SECRET_KEY) == "redacted":
        return [{"type": "redacted_thinking", "data": kept["value"]}]
    summary = item.get("summary") if isinstance(item.get("summary"), list) else []
    text = _texts(summary)
    return [{"type": "thinking", "thinking": text, "signature": kept["value"]}]


def planner_tools(tools: Any, choice: Any) -> tuple[list[Payload], frozenset[str]]:
    """(the tools offered, the names of the freeform ones); ``tool_choice`` ``none``
    offers none, ``allowed_tools`` those it names."""
    if choice == "none" or not isinstance(tools, list):
        return [], frozenset()
    out, custom = [], set()
    for n, tool in enumerate(tools):
        kind = tool.get("type") if isinstance(tool, dict) else None
        get = tool.get if isinstance(tool, dict) else {}.get
        if kind == "function":
            out.append(
                function_tool(get("name"), get("description"), get("parameters"), f"tools[{n}]")
            )
        elif kind == "custom":
            out.append(_freeform(tool, f"tools[{n}]"))
            custom.add(out[-1]["name"])
    return allowed(out, choice), frozenset(custom)


def _freeform(tool: Payload, param: str) -> Payload:
    """A freeform tool as a function of one string (its grammar, if any, described)."""
    grammar = tool.get("format")
    shape = ""
    if isinstance(grammar, dict) and isinstance(grammar.get("definition"), str):
        shape = (
            f" It must follow this {grammar.get('syntax', '')} grammar:\n{grammar['definition']}"
        )
    schema = {
        "type": "object",
        "properties": {"input": {"type": "string", "description": "The whole input." + shape}},
        "required": ["input"],
    }
    return function_tool(tool.get("name"), tool.get("description"), schema, param)


class OpenAIResponses:
    """The Responses dialect."""

    name = "responses"

    @property
    def routes(self) -> tuple[DialectRoute, ...]:
        return (DialectRoute("/v1/responses", importing(self.imported)),)

    def error(self, exc: ProxyError) -> Payload:
        return error_body(exc)

    async def imported(self, body: Any, request: Request, keeper: Keeper) -> Imported:
        body = need_model(body)
        caller = getattr(request.state, "caller", None)
        owner = None if caller is None else caller.key.owner
        prior, sid = await _prior(body.get("previous_response_id"), keeper, owner)
        items = prior + input_items(body.get("input"))
        first = next((i for i in items if i.get("role") == "user"), None)
        sid = sid or session(body, request.headers, first)
        system, messages = planner_messages(items)
        instructions = body.get("instructions")
        if isinstance(instructions, str) and instructions:
            system.insert(0, instructions)
        tools, custom = planner_tools(body.get("tools"), body.get("tool_choice"))
        planned = planner_body(
            body,
            sid,
            system="\n\n".join(t for t in system if t),
            messages=messages,
            tools=tools,
            max_tokens=body.get("max_output_tokens"),
        )
        planned.update(_asks(body))
        reasoning = body.get("reasoning")
        effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
        base = _base(body)
        keep = None
        if body.get("store") is not False:
            keep = partial(_keep, keeper, stored_key(base["id"], owner), items, sid)
        relay = partial(_relay, base=base, custom=custom, keep=keep)
        return Imported(with_effort(planned, effort), relay)


def _asks(body: Payload) -> Payload:
    """``tool_choice`` and ``text.format`` in the planner's form (``asks.py``)."""
    out: Payload = {}
    choice = forced_choice(body.get("tool_choice"), "tool_choice", nested=False)
    if choice is not None:
        out["tool_choice"] = choice
    text = body.get("text")
    output = text_format(text.get("format") if isinstance(text, dict) else None)
    if output is not None:
        out[OUTPUT_KEY] = output
    return out


async def _prior(previous: Any, keeper: Keeper, owner: str | None) -> tuple[list[Payload], str]:
    """The items a ``previous_response_id`` names and its session ("" without one)."""
    if previous is None:
        return [], ""
    if not isinstance(previous, str) or not previous:
        raise DialectError("previous_response_id must be a string", "previous_response_id")
    saved = await keeper.load(stored_key(previous, owner))
    if not isinstance(saved.get("items"), list):
        raise NotFoundError(
            f"no stored response {previous!r} (the proxy keeps those it answered with store"
            " on, for the store's time to live)",
            "previous_response_id",
            "previous_response_not_found",
        )
    return list(saved["items"]), str(saved.get("session") or "")


def _base(body: Payload) -> Payload:
    """The response object's fields fixed by the request."""
    base: Payload = {"id": f"resp_{uuid.uuid4().hex}", "model": body["model"]}
    for name in (*_ECHOED, *_ECHOED_TOO):
        base[name] = body.get(name)
    base["tools"] = body.get("tools") or []
    base["tool_choice"] = body.get("tool_choice") or "auto"
    base["parallel_tool_calls"] = body.get("parallel_tool_calls") is not False
    base["store"] = body.get("store") is not False
    base["metadata"] = body.get("metadata") or {}
    return base


async def _keep(keeper: Keeper, key: str, items: list[Payload], sid: str, result: Payload) -> None:
    """An answer kept with the items before it (what a continuation starts from)."""
    await keeper.save(key, {"items": items + result["output"], "session": sid})


def _relay(
    answering: Answering, *, base: Payload, custom: frozenset[str], keep: Finish | None
) -> Relay:
    return DialectRelay(partial(ResponsesEncoder, base, custom, answering), keep)


__all__ = [
    "OpenAIResponses",
    "input_items",
    "planner_messages",
    "planner_tools",
    "stored_key",
]
