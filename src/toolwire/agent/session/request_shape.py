"""What every request of a session carries besides the messages: one answer for all.

``request_shape(session, config)`` is the system prompt, the tools and the options of
the session's next request. The turn builds its request from it; compaction and the
switch size their budget from the same shape (``fixed_tokens``), so they count what the
request will carry: the subagent's subset of the built-in tools, the session's MCP
tools, ``Task`` when the turn offers it, and ``WebSearch`` only where toolwire itself
searches (a provider's own search is a flag, not a tool).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolwire.agent.session import mcp_calls
from toolwire.agent.session.options import thought_level
from toolwire.agent.session.state import Session
from toolwire.agent.session.system_prompt import system_prompt
from toolwire.config import Config
from toolwire.config.choices import ThoughtLevel
from toolwire.context.tokens import estimate_text, estimate_tools
from toolwire.history import ToolSpec
from toolwire.tools import tool_specs


@dataclass(frozen=True, slots=True)
class RequestShape:
    """The system prompt, tools and options of a request (the messages aside)."""

    system: str
    tools: tuple[ToolSpec, ...]
    thinking: ThoughtLevel
    web_search: bool
    cache: bool

    def fixed_tokens(self) -> int:
        """The raw token estimate of the system prompt and the tools."""
        return estimate_text(self.system) + estimate_tools(list(self.tools))


def request_shape(session: Session, config: Config, backend: str | None = None) -> RequestShape:
    """The shape of the session's next request to ``backend`` (by default the active
    one; a switch sizes its handoff for the chosen one)."""
    chosen = config.backend(backend or session.model.active)
    route = chosen.search_route(config.tools.web)
    without = () if route == "tool" and session.services.tools.search else ("WebSearch",)
    task = session.turn.task_tool
    tools = (
        *tool_specs(session.who.tool_names, without=without),
        *mcp_calls.specs(session),
        *(() if task is None else (task,)),
    )
    return RequestShape(
        system_prompt(session),
        tools,
        thought_level(session, config),
        route == "native",
        chosen.prompt_cache,
    )


__all__ = ["RequestShape", "request_shape"]
