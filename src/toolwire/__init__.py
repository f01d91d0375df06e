"""toolwire: stream LLM tool calls to code editors over the Agent Client Protocol.

The public API is re-exported here; everything else is an implementation detail.
"""

from __future__ import annotations

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
