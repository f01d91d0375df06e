"""The consolidated transcript a session stores for ``session/load`` to replay.

Not the stream of deltas the editor got live, but what it ended up showing: one
``user_message_chunk`` per prompt block, one ``agent_thought_chunk`` and one
``agent_message_chunk`` per text of a response (each message with its own
``messageId``), one ``tool_call`` per call in its final state (title, kind, status,
diff, locations, raw input and output, as the client held it after the last update),
and the last ``plan``. Replaying it never re-streams text (claude-agent-acp#796: text
rendered twice) and never sends an update for an unknown call (docs/agent.md "Sessions").

A client terminal does not outlive the turn (it was released), so a terminal item is
replayed as the command's output text instead. A prompt's image of more than
``SHOWN_BASE64`` (a 12 MB screenshot) is kept as its note: the model's copy is the fitted
one in the history, and the store stays small.

Every message toolwire writes itself (a notice: compaction, switch, a failure, a
command's answer) ends with a paragraph break (``paragraph``): clients that join message
chunks (acpx) would otherwise glue it to the model's next sentence.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, assert_never

from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from toolwire.imaging import SHOWN_BASE64
from toolwire.updates.builders import (
    MessageChunk,
    ToolCall,
    message_chunk,
    plan_update,
    text_chunk,
    tool_call,
)
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.kinds import known_kind
from toolwire.updates.wire import JsonObject, state_to_wire, text_content


def user_updates(blocks: list[Any]) -> list[MessageChunk]:
    """The prompt as ``user_message_chunk``s (the SDK content block models, in wire form)."""
    message_id = uuid.uuid4().hex
    return [
        message_chunk(
            "user_message_chunk",
            _kept(block.model_dump(mode="json", by_alias=True, exclude_none=True)),
            message_id,
        )
        for block in blocks
    ]


def paragraph(text: str) -> str:
    """A message toolwire writes itself, as sent: ending with a blank line (module doc)."""
    return text if text.endswith("\n\n") else text.rstrip("\n") + "\n\n"


def agent_message(text: str, message_id: str | None = None) -> MessageChunk:
    """A message toolwire writes itself as one ``agent_message_chunk`` update."""
    return text_chunk("agent_message_chunk", paragraph(text), message_id or uuid.uuid4().hex)


def _kept(content: dict[str, Any]) -> dict[str, Any]:
    data = content.get("data")
    if content.get("type") != "image" or not isinstance(data, str) or len(data) <= SHOWN_BASE64:
        return content
    note = ImagePart(str(content.get("mimeType", "")), data).note("not kept in the transcript")
    return {"type": "text", "text": note}


def replayed(update: JsonObject, *, compaction: bool) -> JsonObject:
    """A stored update as this client can take it: a compaction marker becomes an agent
    message for a client that did not advertise ``session.compaction``; any other kind is
    replayed as stored (the transcript keeps what the client ended up showing)."""
    kind = known_kind(update)
    match kind:
        case "compaction_update":
            return update if compaction else _compaction_text(update)
        case (
            "user_message_chunk"
            | "agent_message_chunk"
            | "agent_thought_chunk"
            | "tool_call"
            | "tool_call_update"
            | "plan"
            | "current_mode_update"
            | "config_option_update"
            | "available_commands_update"
            | "session_info_update"
            | "usage_update"
            | "notice"
            | "subagent_update"
            | "state_update"
            | "user_message"
            | "terminal_update"
            | "terminal_output_chunk"
            | None
        ):
            return update
        case _:
            assert_never(kind)


def _compaction_text(update: JsonObject) -> JsonObject:
    summary = update.get("summary") or [{"type": "text", "text": "Compacted the conversation."}]
    first = summary[0] if isinstance(summary, list) and summary else {}
    text = first.get("text", "") if isinstance(first, dict) else ""
    marker = str(update.get("compactionId") or uuid.uuid4().hex)
    return agent_message(text.split("\n\n", 1)[0], marker)


def step_updates(
    message: Message | None,
    acp_id: Callable[[str], str],
    engine: UpdateEngine,
    results: Mapping[str, ToolResultPart],
    plan: list[dict[str, Any]] | None,
) -> list[JsonObject]:
    """One model response (and its calls' end states) as replayable updates."""
    out: list[JsonObject] = []
    text_id, thought_id = uuid.uuid4().hex, uuid.uuid4().hex
    for part in message.parts if message is not None else ():
        if isinstance(part, ThinkingPart) and part.text:
            out.append(text_chunk("agent_thought_chunk", part.text, thought_id))
        elif isinstance(part, TextPart) and part.text:
            out.append(text_chunk("agent_message_chunk", part.text, text_id))
        elif isinstance(part, ToolCallPart):
            call = _final_call(engine, acp_id(part.id), results.get(part.id))
            if call is not None:
                out.append(call)
    if plan is not None:
        out.append(plan_update(plan))
    return out


def _final_call(
    engine: UpdateEngine, call_id: str, result: ToolResultPart | None
) -> ToolCall | None:
    try:
        state = engine.client_state(call_id)
    except KeyError:
        return None  # never shown to the editor: nothing to replay
    wire = state_to_wire(state)
    content = wire.get("content")
    if content and any(item.get("type") == "terminal" for item in content):
        output = result.content if result is not None else "(output not kept)"
        wire["content"] = [
            text_content(output) if item.get("type") == "terminal" else item for item in content
        ]
    return tool_call(wire)


__all__ = ["agent_message", "paragraph", "replayed", "step_updates", "user_updates"]
