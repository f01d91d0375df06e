"""Context management: how big a backend's window is, how full a session's context is,
and compaction, the handoff a session makes to itself when it would overflow.

``windows`` knows the windows; ``tokens`` estimates a request before it is sent and is
corrected by each response's usage (``meter``); ``overflow`` recognizes the providers'
context-length errors; ``compact`` plans a compaction on top of ``toolwire.handoff``.
The design and its reasons: docs/context.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolwire.context.compact import (
    Budget,
    Compaction,
    CompactionPlan,
    build_compaction,
    plan_compaction,
    restore,
)
from toolwire.context.meter import ContextMeter, prompt_tokens, response_cost
from toolwire.context.overflow import is_context_overflow
from toolwire.context.point import Point, PointKind
from toolwire.context.tokens import estimate_messages, estimate_request, estimate_text
from toolwire.context.windows import FAMILIES, UNKNOWN_WINDOW, Window, family, window_for

if TYPE_CHECKING:
    from toolwire.config.schema import BackendConfig, LimitsConfig


def backend_window(backend: BackendConfig, limits: LimitsConfig) -> Window:
    """The window the agent uses for ``backend``: its config, else the family table."""
    return window_for(
        backend.model,
        context_window=backend.context_window,
        max_output_tokens=backend.max_output_tokens,
        max_tokens=limits.max_tokens,
    )


__all__ = [
    "FAMILIES",
    "UNKNOWN_WINDOW",
    "Budget",
    "Compaction",
    "CompactionPlan",
    "ContextMeter",
    "Point",
    "PointKind",
    "Window",
    "backend_window",
    "build_compaction",
    "estimate_messages",
    "estimate_request",
    "estimate_text",
    "family",
    "is_context_overflow",
    "plan_compaction",
    "prompt_tokens",
    "response_cost",
    "restore",
    "window_for",
]
