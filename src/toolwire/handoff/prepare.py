"""The two ways to make a handoff: offline (``build_handoff``) and with a model
(``prepare_handoff``). Both are ``plan_handoff`` followed by a summary."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from toolwire.backends.base import Backend
from toolwire.handoff.build import (
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_TOOL_CONTEXT_CHARS,
    DEFAULT_MAX_TOOL_RESULT_CHARS,
    Handoff,
    plan_handoff,
)
from toolwire.handoff.extractive import extractive_summary
from toolwire.handoff.summarize import Summary, SummaryCache, summarize
from toolwire.history import Message


def build_handoff(
    history: Sequence[Message],
    switch_at: int | None = None,
    *,
    cwd: str | None = None,
    target: str | None = None,
    max_tool_context_chars: int = DEFAULT_MAX_TOOL_CONTEXT_CHARS,
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
    keep_last: int = DEFAULT_KEEP_LAST,
    summary: Summary | bool = True,
    read_only_tools: Collection[str] = (),
) -> Handoff:
    """The handoff without a model call.

    ``summary``: True for the extractive summary, False to leave the section out, or a
    ``Summary`` made earlier (e.g. by ``summarize``) to use as is.
    """
    plan = plan_handoff(
        history,
        switch_at,
        cwd=cwd,
        target=target,
        max_tool_context_chars=max_tool_context_chars,
        max_tool_result_chars=max_tool_result_chars,
        keep_last=keep_last,
        read_only_tools=read_only_tools,
    )
    if isinstance(summary, Summary):
        return plan.finish(summary)
    if not summary:
        return plan.finish(None)
    text = extractive_summary(plan.head, plan.head_items, cwd=cwd)
    return plan.finish(Summary(text, "extractive"))


async def prepare_handoff(
    history: Sequence[Message],
    switch_at: int | None = None,
    *,
    summarizer: Backend | None = None,
    cache: SummaryCache | None = None,
    include_summary: bool = True,
    cwd: str | None = None,
    target: str | None = None,
    max_tool_context_chars: int = DEFAULT_MAX_TOOL_CONTEXT_CHARS,
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
    keep_last: int = DEFAULT_KEEP_LAST,
    timeout: float = 120.0,
    read_only_tools: Collection[str] = (),
) -> Handoff:
    """The handoff with the summary written by ``summarizer`` (extractive without one, or
    when its call fails; ``Handoff.summary.error`` then says why). Summaries are looked up
    in and stored to ``cache``, so a second call for the same prefix makes no model call.
    """
    plan = plan_handoff(
        history,
        switch_at,
        cwd=cwd,
        target=target,
        max_tool_context_chars=max_tool_context_chars,
        max_tool_result_chars=max_tool_result_chars,
        keep_last=keep_last,
        read_only_tools=read_only_tools,
    )
    if not include_summary:
        return plan.finish(None)
    summary = await summarize(
        plan.head, summarizer, items=plan.head_items, cwd=cwd, cache=cache, timeout=timeout
    )
    return plan.finish(summary)


__all__ = ["build_handoff", "prepare_handoff"]
