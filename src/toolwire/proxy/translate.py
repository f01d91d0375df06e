"""An Anthropic Messages request body -> a provider-neutral ``ModelRequest``.

The history goes through ``backends.anthropic_import`` (tool results first
and in call order, names attached), then each backend's own ``build_body`` writes its
wire format: ids normalized, ``is_error`` kept as text where the wire has no flag,
thinking kept only for the backend that produced it (never a signature invented),
``cache_control`` and beta-only fields gone because only known fields are carried over.
Mid-conversation ``role: "system"`` messages (Claude Code >= 2.1.154) become user text.
Anthropic's ``web_search`` server tool and its answered searches: ``websearch.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.backends.anthropic_import import TranscriptError, import_anthropic
from toolwire.backends.base import ModelRequest
from toolwire.config.choices import ThoughtLevel
from toolwire.history import Message, ToolSpec
from toolwire.proxy.asks import OUTPUT_KEY, output_format, stop_sequences, tool_choice
from toolwire.proxy.errors import BadRequestError
from toolwire.proxy.websearch import FUNCTION, hint_once, is_search_tool, unfold

# Claude Code asks for 128,000 output tokens; most OpenAI-style servers refuse that much.
MAX_OUTPUT_TOKENS = 32000
_BILLING_PREFIX = "x-anthropic-billing-header:"  # Claude Code's first system block
# How much an OpenAI-dialect client asked the model to think (``reasoning.effort``, which
# its importer puts under this key): the backend maps the level as the agent's does.
EFFORT_KEY = "reasoning_effort"
_EFFORTS: dict[str, ThoughtLevel] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}


def parse_request(body: Any) -> Mapping[str, Any]:
    """Check the shape every Messages request must have; ``BadRequestError`` otherwise."""
    if not isinstance(body, dict):
        raise BadRequestError("the request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise BadRequestError("model: a non-empty string is required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("messages: a non-empty list is required")
    for number, message in enumerate(messages, 1):
        if not isinstance(message, dict) or message.get("role") not in (
            "user",
            "assistant",
            "system",
        ):
            raise BadRequestError(f"messages[{number - 1}]: role must be user, assistant or system")
    tokens = body.get("max_tokens", 4096)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
        raise BadRequestError("max_tokens: a positive integer is required")
    if "tools" in body and not isinstance(body["tools"], list):
        raise BadRequestError("tools: must be a list")
    return body


def import_history(body: Mapping[str, Any]) -> tuple[Message, ...]:
    """The request's messages as a neutral history (no backend attributed to any turn)."""
    try:
        return tuple(import_anthropic(unfold(_system_as_user(body["messages"]))))
    except TranscriptError as e:
        raise BadRequestError(str(e)) from e


def raw_index(body: Mapping[str, Any], neutral_index: int) -> int | None:
    """The index of the client's message where the neutral history's ``neutral_index``
    starts (None when that falls inside a message, which a continued history never does:
    switch points are taken at the end of a request's history)."""
    count = 0
    messages = _system_as_user(body["messages"])
    for index, message in enumerate(messages):
        if count == neutral_index:
            return index
        count += len(import_anthropic(unfold([message])))
    return len(messages) if count == neutral_index else None


def to_model_request(
    body: Mapping[str, Any], messages: Sequence[Message], *, search: bool | None = None
) -> ModelRequest:
    """The neutral request: ``messages`` (imported, maybe rewritten) and the body's rest
    (what the client asked of the answer: ``asks.py``).

    ``search``: the proxy runs web searches, so Anthropic's ``web_search`` server tool
    is offered as a function (``websearch.FUNCTION``); without, it is left out (no other
    backend can run it); None: an Anthropic backend's, which runs it (kept as a tool)."""
    temperature = body.get("temperature")
    tools = _tools(body.get("tools") or [], search=search)
    return ModelRequest(
        system=system_text(body.get("system")),
        messages=tuple(messages),
        tools=tools,
        max_tokens=min(int(body.get("max_tokens", 4096)), MAX_OUTPUT_TOKENS),
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        thinking=_EFFORTS.get(str(body.get(EFFORT_KEY)), "off"),
        tool_choice=tool_choice(body.get("tool_choice"), tools, body.get("tools")),
        stop=stop_sequences(body.get("stop_sequences")),
        output=output_format(body.get(OUTPUT_KEY)),
    )


def system_text(system: Any) -> str:
    """The system prompt as text; Claude Code's billing header block is left out."""
    if isinstance(system, str):
        return system
    if not isinstance(system, list):
        return ""
    texts = [str(b.get("text", "")) for b in system if isinstance(b, dict)]
    return "\n\n".join(t for t in texts if t and not t.startswith(_BILLING_PREFIX))


def _system_as_user(messages: list[Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for message in messages:
        if message.get("role") == "system":
            content = message.get("content")
            text = system_text(content) if not isinstance(content, str) else content
            message = {"role": "user", "content": [{"type": "text", "text": text}]}
        out.append(message)
    return out


def _tools(tools: list[Any], *, search: bool | None) -> tuple[ToolSpec, ...]:
    out: list[ToolSpec] = []
    for number, tool in enumerate(tools):
        if search is None or not is_search_tool(tool):
            out.append(_tool(tool, number))
        elif search:
            out.append(FUNCTION)
        else:
            hint_once()
    return tuple(out)


def _tool(tool: Any, number: int) -> ToolSpec:
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise BadRequestError(f"tools[{number}]: a tool needs a name")
    schema = tool.get("input_schema")
    return ToolSpec(
        name=tool["name"],
        description=str(tool.get("description", "")),
        input_schema=schema if isinstance(schema, dict) else {},
    )


__all__ = [
    "EFFORT_KEY",
    "MAX_OUTPUT_TOKENS",
    "import_history",
    "parse_request",
    "raw_index",
    "system_text",
    "to_model_request",
]
