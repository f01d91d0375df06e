"""Deprecated alias of ``toolwire.updates``, kept for the 0.1 release.

The update engine moved to ``toolwire.updates`` and the ACP agent to ``toolwire.agent``;
the traffic recorder is in ``toolwire.testing``. Import from there: this module goes away
in the next release.
"""

from __future__ import annotations

from toolwire.testing.record import TrafficRecorder as Recorder  # its name before 0.2
from toolwire.testing.record import read_recording, redact
from toolwire.updates import (
    CLIENT_PROFILES,
    DEFAULT_INTERVAL,
    PROFILES,
    CallRecord,
    CallSource,
    Envelope,
    MetricsSnapshot,
    Notification,
    OutputWindow,
    Profile,
    ResponseTranslator,
    SessionMetrics,
    ToolCallState,
    ToolCallStatus,
    ToolKind,
    UpdateBuilder,
    UpdateEngine,
    apply_update,
    cap_text,
    changed_fields,
    diff_content,
    location,
    profile_for_client,
    same,
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
    "read_recording",
    "redact",
    "same",
    "state_to_wire",
    "terminal_content",
    "text_content",
]
