"""The part of every request body that no provider does differently.

Each builder (``anthropic``, ``openai_chat``, ``openai_responses``, ``gemini``) starts
from the same four things: whether tool calls are native, the history it translates
(repaired, or as text markup, images as notes where none are taken), the system prompt
(with the tool prompt of a text format appended) and the tool names its provider's rule
accepts. ``prepare`` makes them once, so a builder holds only its wire's shapes.
"""

from __future__ import annotations

from typing import NamedTuple

from toolwire.backends._asks import prompt_notes
from toolwire.backends._images import wire_history
from toolwire.backends._names import NameRule, ToolNames
from toolwire.backends.base import ModelRequest
from toolwire.backends.textformat import tool_prompt
from toolwire.config.choices import ToolFormat, native_tools
from toolwire.history import Message


class Prepared(NamedTuple):
    """What a builder translates: ``native`` tools, the ``history``, the ``system``
    prompt and the tools' wire ``names`` (unpacked in that order)."""

    native: bool
    history: list[Message]
    system: str
    names: ToolNames


def prepare(
    request: ModelRequest,
    rule: NameRule,
    tool_format: ToolFormat,
    *,
    vision: bool,
    json_field: bool = True,
) -> Prepared:
    """The provider-neutral start of a body for ``request`` (module doc); ``json_field``:
    the wire takes a JSON output format (else the system prompt asks for it, ``_asks``)."""
    native = native_tools(tool_format)
    history = wire_history(request.messages, tool_format, vision=vision)
    tools = tool_prompt(tool_format, request.tools) if not native and request.tools else ""
    notes = prompt_notes(request, native=native, json_field=json_field)
    system = "\n\n".join(s for s in (request.system, tools, notes) if s)
    names = ToolNames.build((t.name for t in request.tools), rule)
    return Prepared(native, history, system, names)


__all__ = ["Prepared", "prepare"]
