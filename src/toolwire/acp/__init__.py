"""ACP side of toolwire: the update engine and what it is built from.

Not imported here: ``toolwire.acp.sdk`` (it loads the official ``acp`` models, which the
engine never needs) and ``toolwire.acp.turn`` (it sits above ``toolwire.lifecycle``,
which itself uses this package's wire vocabulary).
"""

from __future__ import annotations

from toolwire.acp.builder import CallRecord, Envelope, UpdateBuilder
from toolwire.acp.diff import changed_fields, same
from toolwire.acp.metrics import MetricsSnapshot, SessionMetrics
from toolwire.acp.output import OutputWindow, cap_text
from toolwire.acp.profiles import CLIENT_PROFILES, PROFILES, Profile, profile_for_client
from toolwire.acp.record import Recorder, read_recording, redact
from toolwire.acp.updates import DEFAULT_INTERVAL, CallSource, UpdateEngine
from toolwire.acp.wire import (
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
    "Recorder",
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
    "read_recording",
    "redact",
    "same",
    "state_to_wire",
    "terminal_content",
    "text_content",
]
