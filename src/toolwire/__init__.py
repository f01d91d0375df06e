"""toolwire: stream LLM tool calls to code editors over the Agent Client Protocol.

The public API is re-exported here; everything else is an implementation detail. Each
name loads its module on first use, so that a command that needs none of them (``toolwire
acp`` answering ``initialize``) does not pay for the decoders.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolwire.decode import FORMATS, Decoder, decoder_for
    from toolwire.errors import (
        HTTPStatusError,
        LifecycleError,
        ProtocolError,
        ToolwireError,
        TransportError,
        TransportTimeoutError,
        UsageError,
    )
    from toolwire.events import (
        Event,
        MessageEnd,
        StreamError,
        TextDelta,
        ThinkingDelta,
        ToolCallDelta,
        ToolCallEnd,
        ToolCallStart,
        Usage,
        event_to_dict,
    )
    from toolwire.jsonstream import JsonStream, ParseResult
    from toolwire.sse import SSEDecoder, SSEEvent

_LAZY = {
    "FORMATS": "toolwire.decode",
    "Decoder": "toolwire.decode",
    "decoder_for": "toolwire.decode",
    "HTTPStatusError": "toolwire.errors",
    "LifecycleError": "toolwire.errors",
    "ProtocolError": "toolwire.errors",
    "ToolwireError": "toolwire.errors",
    "TransportError": "toolwire.errors",
    "TransportTimeoutError": "toolwire.errors",
    "UsageError": "toolwire.errors",
    "Event": "toolwire.events",
    "MessageEnd": "toolwire.events",
    "StreamError": "toolwire.events",
    "TextDelta": "toolwire.events",
    "ThinkingDelta": "toolwire.events",
    "ToolCallDelta": "toolwire.events",
    "ToolCallEnd": "toolwire.events",
    "ToolCallStart": "toolwire.events",
    "Usage": "toolwire.events",
    "event_to_dict": "toolwire.events",
    "JsonStream": "toolwire.jsonstream",
    "ParseResult": "toolwire.jsonstream",
    "SSEDecoder": "toolwire.sse",
    "SSEEvent": "toolwire.sse",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__version__ = "0.1.0"

__all__ = [
    "FORMATS",
    "Decoder",
    "Event",
    "HTTPStatusError",
    "JsonStream",
    "LifecycleError",
    "MessageEnd",
    "ParseResult",
    "ProtocolError",
    "SSEDecoder",
    "SSEEvent",
    "StreamError",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolwireError",
    "TransportError",
    "TransportTimeoutError",
    "Usage",
    "UsageError",
    "__version__",
    "decoder_for",
    "event_to_dict",
]
