"""Session modes and permission: who decides whether an edit or a command runs.

Modes (``session/set_mode``, also a config option with ``category: "mode"``):

``ask``           edits and commands wait for ``session/request_permission``;
``accept-edits``  edits run without asking, commands ask;
``read-only``     edits and commands are refused with a tool error the model can read.

Reads, searches and ``TodoWrite`` never ask (``Tool.needs_permission`` is False). "Allow
always" holds for the tool's name for the rest of the session (every later ``Edit``,
every later ``Bash``), not across sessions.

The request follows the rules peers broke (docs/design.md, "ACP rules that bite"): its
``tool_call`` is already on the wire (google-gemini/gemini-cli#21783); the ``toolCall``
it carries has no ``content``, so it cannot replace the diff being approved
(agentclientprotocol/codex-acp#171). For ``Edit``/``Write`` the
diff is shown first (``preview``), so the user sees what they approve.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from toolwire.config.choices import MODES as MODE_IDS
from toolwire.config.choices import Mode
from toolwire.tools import Tool, ToolContext
from toolwire.tools.edit import edit_args, plan_edit
from toolwire.tools.errors import PathRefusedError, ToolError
from toolwire.updates.wire import diff_content

Decision: TypeAlias = Literal["allow", "ask", "deny"]
Answer: TypeAlias = Literal["allow_once", "allow_always", "reject", "cancelled"]

_LABELS: Final[dict[Mode, tuple[str, str]]] = {
    "ask": ("Ask", "Ask before every edit and command."),
    "accept-edits": ("Accept edits", "Edit files without asking; ask before commands."),
    "read-only": ("Read only", "Read and search only: edits and commands are refused."),
}
#: Mode id -> (name, description), in the order offered. The set is ``config.choices``'s:
#: a mode added there without a label here fails at import.
MODES: Final[dict[Mode, tuple[str, str]]] = {mode: _LABELS[mode] for mode in MODE_IDS}


def decide(mode: str, tool: Tool, always: set[str]) -> Decision:
    """Whether ``tool`` may run now in ``mode``, given the tools allowed for good."""
    if not tool.needs_permission:
        return "allow"
    if mode == "read-only":
        return "deny"
    if tool.name in always or (mode == "accept-edits" and tool.kind == "edit"):
        return "allow"
    return "ask"


def refusal(tool: Tool) -> str:
    """The tool error for a call refused by ``read-only`` (written for the model)."""
    what = "edit files" if tool.kind == "edit" else "run commands"
    return (
        f"Refused: the session is in read-only mode, so {tool.name} cannot {what}. "
        "Tell the user what you would change, or ask them to switch the mode."
    )


def options(tool: Tool) -> list[PermissionOption]:
    """Allow once, allow always (this tool, this session), reject."""
    return [
        PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
        PermissionOption(
            option_id="allow_always", name=f"Always allow {tool.name}", kind="allow_always"
        ),
        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    ]


def tool_call_model(payload: Mapping[str, Any]) -> ToolCallUpdate:
    """The SDK model of the engine's permission payload (no ``content``: see module doc)."""
    return ToolCallUpdate.model_validate(dict(payload))


def answer(outcome: object) -> Answer:
    """The user's choice from a ``RequestPermissionResponse.outcome``."""
    if isinstance(outcome, AllowedOutcome):
        if outcome.option_id in ("allow_once", "allow_always"):
            return "allow_once" if outcome.option_id == "allow_once" else "allow_always"
        return "reject"
    return "cancelled"


def rejected(tool: Tool) -> str:
    """The tool error when the user said no."""
    return (
        f"The user rejected this {tool.name} call; nothing was changed. "
        "Do not retry it as is: ask the user how to proceed, or take another approach."
    )


async def preview(tool: Tool, args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
    """The diff an ``Edit``/``Write`` would make, or None when it cannot be known first."""
    if tool.name not in ("Edit", "Write"):
        return None
    raw = args.get("file_path")
    if not isinstance(raw, str) or not raw:
        return None
    try:
        path = ctx.resolve(raw)
    except (PathRefusedError, OSError, ValueError):
        return None  # the tool will say why; nothing to preview
    try:
        old: str | None = await ctx.fs.read_text(path)
    except FileNotFoundError:
        old = None
    except (OSError, UnicodeDecodeError):
        return None
    new = _after(tool.name, args, old)
    return None if new is None else diff_content(str(path), new, old)


def _after(name: str, args: Mapping[str, Any], old: str | None) -> str | None:
    if name == "Write":
        content = args.get("content")
        return content if isinstance(content, str) else None
    try:  # the tool's own rules, so what is approved is what the tool will do
        return plan_edit(edit_args(args), old).new_text
    except ToolError:
        return None  # the tool will fail and say why; nothing to preview


__all__ = [
    "MODES",
    "Answer",
    "Decision",
    "answer",
    "decide",
    "options",
    "preview",
    "refusal",
    "rejected",
    "tool_call_model",
]
