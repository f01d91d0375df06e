"""The handoff's public API is explicit and pinned."""

from __future__ import annotations

import toolwire.handoff

EXPORTED = [
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


def test_exported_members() -> None:
    assert toolwire.handoff.__all__ == EXPORTED
    for name in EXPORTED:
        assert hasattr(toolwire.handoff, name), name


def test_defaults_match_the_config_section() -> None:
    from toolwire.config.schema import HandoffConfig

    defaults = HandoffConfig()
    assert defaults.max_tool_context_chars == toolwire.handoff.DEFAULT_MAX_TOOL_CONTEXT_CHARS
    assert defaults.max_tool_result_chars == toolwire.handoff.DEFAULT_MAX_TOOL_RESULT_CHARS
    assert defaults.keep_last == toolwire.handoff.DEFAULT_KEEP_LAST
