"""What stands between a response's decoded events and the caller: tool calls in text.

A backend with a text ``tool_format`` reads every call out of the text (``TagAdapter``);
a native one may rescue the calls its server leaked there (``decode.rescue``). HTTP
backends and the replay choose the same way, so a recorded session replays as it ran.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol

from toolwire.backends._names import ToolNames
from toolwire.backends.base import ModelRequest
from toolwire.backends.textformat import TagAdapter
from toolwire.config.choices import ToolFormat, native_tools
from toolwire.decode.rescue import Rescue
from toolwire.events import Event

log = logging.getLogger("toolwire.backends")


class Adapter(Protocol):
    """Turns a response's events into the ones callers get (text calls lifted out)."""

    def events(self, events: Iterable[Event]) -> list[Event]: ...


def adapter_for(
    tool_format: ToolFormat,
    request: ModelRequest,
    names: ToolNames | None,
    *,
    rescue: bool,
    source: str,
) -> Adapter | None:
    """The adapter for one response, or None when events pass as decoded. ``names``: the
    wire names the provider was offered; ``source``: who answers, for the rescue's notice."""
    if not native_tools(tool_format):
        return TagAdapter(tool_format, request.tools)
    if not (rescue and request.tools):
        return None
    # The model saw the wire names: a leaked call uses one (``names`` restores it).
    tools = {(names.wire(t.name) if names else t.name): t.input_schema for t in request.tools}
    return Rescue(tools, source=source, notice=log.warning)


__all__ = ["Adapter", "adapter_for"]
