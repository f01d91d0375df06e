"""The ``PreToolUse`` and ``PostToolUse`` hooks of a tool call, as the executor meets them.

``before`` runs first, before the permission question, as in Claude Code: exit 2 or a
``deny`` refuses the call with the hook's reason for the model; ``allow`` and ``ask``
are handed to the permission rule (``Executor._permit``). ``after`` runs once the result
is in: a block appends the hook's reason to what the model reads (the tool already ran),
and ``additionalContext`` is appended the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from toolwire.agent.session.hooks import SessionHooks
from toolwire.agent.session.turn_state import PromptStopReason
from toolwire.history import ToolResultPart
from toolwire.hooks.protocol import Permission
from toolwire.mcp import McpTool
from toolwire.mcp.names import raw_name

Say = Callable[[str], Awaitable[None]]
MAX_STOP_BLOCKS: Final = 8
"""How often ``Stop`` hooks may keep one turn going: a hook that always blocks would
otherwise never let it end (Claude Code leaves that to the hook's ``stop_hook_active``)."""


def hook_name(tool: McpTool) -> str:
    """What hooks call an MCP tool: ``mcp__<server>__<tool>``, as Claude Code names it
    (before any rewriting for a provider)."""
    return raw_name(tool.server, tool.name)


class ToolHooks:
    """The tool hooks of one turn's executor."""

    __slots__ = ("hooks",)

    def __init__(self, hooks: SessionHooks) -> None:
        self.hooks = hooks

    async def before(
        self, name: str, call_id: str, args: Mapping[str, Any]
    ) -> tuple[Permission | None, str | None]:
        """The hooks' permission decision, and the refusal for the model when they block."""
        told = await self.hooks.run("PreToolUse", name, tool_input=dict(args), tool_use_id=call_id)
        if told.blocked or told.permission == "deny":
            return None, f"A PreToolUse hook blocked this {name} call: {told.reason or 'denied'}"
        return told.permission, None

    async def after(
        self, name: str, args: Mapping[str, Any], part: ToolResultPart
    ) -> ToolResultPart:
        """The result for the model, with what the ``PostToolUse`` hooks said about it."""
        response = {"content": part.content, "is_error": part.is_error}
        told = await self.hooks.run(
            "PostToolUse",
            name,
            tool_input=dict(args),
            tool_use_id=part.call_id,
            tool_response=response,
        )
        notes = [f"PostToolUse hook: {r}" for r in told.reasons] if told.blocked else []
        notes += told.context
        if not notes:
            return part
        return dataclasses.replace(part, content="\n\n".join([part.content, *notes]))


class TurnHooks:
    """The hooks of a prompt turn: ``SessionStart`` (at the session's first prompt in
    this process), ``UserPromptSubmit`` (before the prompt is stored) and ``Stop``."""

    __slots__ = ("hooks",)

    def __init__(self, hooks: SessionHooks) -> None:
        self.hooks = hooks

    async def prompt(self, text: str, say: Say) -> str | None:
        """The text for the model with the hooks' context after it; None when a
        ``UserPromptSubmit`` hook blocked the prompt (the user is told why)."""
        session = self.hooks.session
        context: list[str] = []
        if not session.services.hook_state.started:
            session.services.hook_state.started = True
            source = "resume" if session.history else "startup"
            context += (await self.hooks.run("SessionStart", source=source)).context
        told = await self.hooks.run("UserPromptSubmit", prompt=text)
        if told.blocked:
            await say(f"A UserPromptSubmit hook blocked this prompt: {told.reason}")
            return None
        return "\n\n".join([text, *context, *told.context])

    async def stop(self, go_on: Callable[[str], Awaitable[PromptStopReason]]) -> PromptStopReason:
        """Run the ``Stop`` hooks at the end of a turn; while one blocks, the turn goes on
        with its reason as the user's message (at most ``MAX_STOP_BLOCKS`` times)."""
        stop: PromptStopReason = "end_turn"
        for again in range(MAX_STOP_BLOCKS + 1):
            told = await self.hooks.run("Stop", stop_hook_active=again > 0)
            if not told.blocked or again == MAX_STOP_BLOCKS or stop != "end_turn":
                break
            stop = await go_on(f"A Stop hook asks you to go on: {told.reason}")
        return stop


__all__ = ["MAX_STOP_BLOCKS", "ToolHooks", "TurnHooks", "hook_name"]
