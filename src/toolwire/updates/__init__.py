"""The pure ACP update engine: normalized events in, ``session/update`` notifications out.

No ACP SDK and no asyncio here; the agent (``toolwire.agent``) drives it, and so can any
other program: feed a ``ResponseTranslator`` the events of a decoder and it yields the
notifications an editor should receive.
"""

from __future__ import annotations

from toolwire.updates.diff import changed_fields, same
from toolwire.updates.engine import DEFAULT_INTERVAL, CallSource, UpdateEngine
from toolwire.updates.metrics import MetricsSnapshot, SessionMetrics
from toolwire.updates.output import OutputWindow, cap_text
from toolwire.updates.profiles import CLIENT_PROFILES, PROFILES, Profile, profile_for_client
from toolwire.updates.render import CallRecord, Envelope, UpdateBuilder
from toolwire.updates.translate import ResponseTranslator
from toolwire.updates.wire import (
    Notification,
    ToolCallState,
    ToolCallStatus,
    ToolKind,
    apply_update,
    diff_content,
    location,
    state_to_wire,
    terminal_content,
    text_content,
)

__all__ = [
    "CLIENT_PROFILES",
    "DEFAULT_INTERVAL",
    "PROFILES",
    "CallRecord",
    "CallSource",
    "Envelope",
    "MetricsSnapshot",
    "Notification",
    "OutputWindow",
    "Profile",
    "ResponseTranslator",
    "SessionMetrics",
    "ToolCallState",
    "ToolCallStatus",
    "ToolKind",
    "UpdateBuilder",
    "UpdateEngine",
    "apply_update",
    "cap_text",
    "changed_fields",
    "diff_content",
    "location",
    "profile_for_client",
    "same",
    "state_to_wire",
    "terminal_content",
    "text_content",
]
