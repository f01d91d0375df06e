"""An MCP server's ``elicitation/create``: the question, handed to whoever can ask it.

The SDK's client calls back when a server asks the user for input (a form by JSON
Schema, or a URL to open). ``callback`` turns that into an ``Elicitation`` for the
session's ``Elicitor`` (the agent asks the editor, or declines with a notice) and its
answer back into the MCP result. With a callback the client tells servers it supports
elicitation, so the agent always gives one: a server hears "declined", not "not
supported", from an editor that cannot ask.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True, slots=True)
class Elicitation:
    """One question from server ``server``: a ``form`` (``schema``) or a ``url``."""

    server: str
    mode: Literal["form", "url"]
    message: str
    schema: dict[str, Any] | None = None
    url: str | None = None
    elicitation_id: str | None = None


#: What the session does with a question: the action and, on accept, the content.
Elicitor = Callable[[Elicitation], Awaitable[tuple[Action, dict[str, Any] | None]]]


def callback(server: str, elicitor: Elicitor) -> Any:
    """The SDK client's ``elicitation_callback`` for ``server``."""
    import mcp_types as types  # the SDK, only once a server runs (see toolwire.mcp)

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            question = Elicitation(
                server,
                "url",
                params.message,
                url=params.url,
                elicitation_id=params.elicitation_id,
            )
        else:
            schema = params.requested_schema
            shown = schema if isinstance(schema, dict) else dict(schema or {})
            question = Elicitation(server, "form", params.message, schema=shown)
        action, content = await elicitor(question)
        return types.ElicitResult(action=action, content=content if action == "accept" else None)

    return elicit


__all__ = ["Action", "Elicitation", "Elicitor", "callback"]
