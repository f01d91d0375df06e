"""The handoff: what a new backend receives when a session switches backends.

The new model gets a text block at the start of the next user message (a summary of the
conversation, then the tool context verbatim and deduplicated, under a character
budget) and the last K turns as they were. Use::

    handoff = await prepare_handoff(history, summarizer=backend_or_none, cache=cache,
                                    cwd=session_cwd, target=new_backend.name,
                                    max_tool_context_chars=..., max_tool_result_chars=...,
                                    keep_last=...)
    request_messages = handoff.apply(history)      # on every request after the switch

``build_handoff`` does the same without a model call. Keep the raw history (never the
messages ``apply`` returns): the next switch is computed from it, so after A -> B -> A
the files A read before the first switch are still there. The rules and their reasons
are in docs/handoff.md.
"""

from __future__ import annotations

from toolwire.handoff.build import (
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_TOOL_CONTEXT_CHARS,
    DEFAULT_MAX_TOOL_RESULT_CHARS,
    Handoff,
    HandoffPlan,
    HandoffStats,
    ItemReport,
    ItemStatus,
    plan_handoff,
)
from toolwire.handoff.carried import Carried, carried, describe_carried
from toolwire.handoff.commands import CommandClass, CommandKind, classify_command
from toolwire.handoff.dedupe import DropReason
from toolwire.handoff.extract import Category, ToolItem, extract_items, normalize_path
from toolwire.handoff.importers import (
    Transcript,
    TranscriptError,
    TranscriptFormat,
    detect_format,
    import_transcript,
    load_transcript,
)
from toolwire.handoff.prepare import build_handoff, prepare_handoff
from toolwire.handoff.summarize import (
    MemorySummaryCache,
    Summary,
    SummaryCache,
    SummarySource,
    history_digest,
    summarize,
)

__all__ = [
    "DEFAULT_KEEP_LAST",
    "DEFAULT_MAX_TOOL_CONTEXT_CHARS",
    "DEFAULT_MAX_TOOL_RESULT_CHARS",
    "Carried",
    "Category",
    "CommandClass",
    "CommandKind",
    "DropReason",
    "Handoff",
    "HandoffPlan",
    "HandoffStats",
    "ItemReport",
    "ItemStatus",
    "MemorySummaryCache",
    "Summary",
    "SummaryCache",
    "SummarySource",
    "ToolItem",
    "Transcript",
    "TranscriptError",
    "TranscriptFormat",
    "build_handoff",
    "carried",
    "classify_command",
    "describe_carried",
    "detect_format",
    "extract_items",
    "history_digest",
    "import_transcript",
    "load_transcript",
    "normalize_path",
    "plan_handoff",
    "prepare_handoff",
    "summarize",
]
