"""Session modes and permission: who decides whether an edit or a command runs.

Modes (``session/set_mode``, also a config option with ``category: "mode"``):

``ask``           edits and commands wait for ``session/request_permission``;
``accept-edits``  edits run without asking, commands ask;
``read-only``     edits and commands are refused with a tool error the model can read;
``plan``          as ``read-only``, and the model ends its turn with a plan; then the
                  user is asked whether to switch to ``accept-edits`` and go (``plan``);
``bypass``        nothing asks. Never a default (``config.load``): chosen per session.

Reads, searches and ``TodoWrite`` never ask (a ``read`` ``Tool.effect``). "Allow
always" and "always reject" hold for the tool's name for the rest of the session (every
later ``Edit``, every later ``Bash``), not across sessions; a tool rejected for good is
refused without asking, in every mode but ``bypass``. The rule itself, for built-in and
MCP tools alike, is ``toolwire.agent.turn.policy``.

The request follows the rules peers broke (docs/design.md, "ACP rules that bite"): its
``tool_call`` is already on the wire (google-gemini/gemini-cli#21783); the ``toolCall``
it carries names the call (title, kind, locations, raw input: docs/agent.md) and has
no ``content`` of its own, so it cannot replace the diff being approved
(agentclientprotocol/codex-acp#171). For ``Edit``/``Write`` the diff is shown first
(``preview``), bounded like ``Read`` (``bounded_diff``), so the user sees what they
approve.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from acp.schema import PermissionOption

from toolwire.config.choices import MODES as MODE_IDS
from toolwire.config.choices import Mode
from toolwire.tools import Tool, ToolContext
from toolwire.tools.errors import PathRefusedError, ToolError
from toolwire.tools.files import read_existing
from toolwire.updates.cards import CONTEXT_LINES, bounded_diff
from toolwire.updates.wire import text_content

Answer: TypeAlias = Literal["allow_once", "allow_always", "reject", "reject_always", "cancelled"]

_LABELS: Final[dict[Mode, tuple[str, str]]] = {
    "ask": ("Ask", "Ask before every edit and command."),
    "accept-edits": ("Accept edits", "Edit files without asking; ask before commands."),
    "read-only": ("Read only", "Read and search only: edits and commands are refused."),
    "plan": (
        "Plan",
        "Read and search, then present a plan; you are asked before it is carried out.",
    ),
    "bypass": (
        "Bypass permissions",
        "Nothing asks: every edit and command runs at once, without your approval.",
    ),
}
#: Mode id -> (name, description), in the order offered. The set is ``config.choices``'s:
#: a mode added there without a label here fails at import.
MODES: Final[dict[Mode, tuple[str, str]]] = {mode: _LABELS[mode] for mode in MODE_IDS}


def options(name: str) -> list[PermissionOption]:
    """Allow once, allow always, reject, always reject (this tool, this session)."""
    return [
        PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
        PermissionOption(
            option_id="allow_always", name=f"Always allow {name}", kind="allow_always"
        ),
        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        PermissionOption(
            option_id="reject_always", name=f"Always reject {name}", kind="reject_always"
        ),
    ]


def answer(option_id: str | None) -> Answer:
    """The user's choice from the option chosen (``Notifier.ask``; None: cancelled)."""
    if option_id is None:
        return "cancelled"
    if option_id in ("allow_once", "allow_always", "reject_always"):
        return option_id  # type: ignore[return-value]
    return "reject"


async def preview(
    tool: Tool, args: Mapping[str, Any], ctx: ToolContext
) -> list[dict[str, Any]] | None:
    """The diff an ``Edit``/``Write`` would make, as the call's content; None when it
    cannot be known first.

    Bounded like ``Read``: a file over ``limits.max_file_bytes`` is not read at all (a
    note says so), and the diff is cut by ``bounded_diff``. A ``Write`` over a 63 MB
    file once sent the whole file in the preview.
    """
    path = _target(tool, args, ctx)
    if path is None:
        return None
    try:
        found: os.stat_result | None = os.stat(path)
    except OSError:
        found = None  # missing on disk: the port (perhaps an editor buffer) decides
    if found is not None and not stat.S_ISREG(found.st_mode):
        return None  # a directory, a FIFO, a device: never opened for a preview
    size = None if found is None else found.st_size
    limit = ctx.limits.max_file_bytes
    if size is not None and size > limit:
        return [
            text_content(
                f"No preview: {ctx.show(path)} is {size:,} bytes, more than the "
                f"{limit:,} bytes toolwire reads from a file."
            )
        ]
    try:  # the tools' own read: a directory or a file that is not UTF-8 is refused
        old = await read_existing(ctx, path)
    except (ToolError, OSError, UnicodeDecodeError):
        return None
    new = tool.proposed(args, old)
    if new is None:
        return None
    return bounded_diff(str(path), new, old, ctx.limits.read_max_chars)


def _target(tool: Tool, args: Mapping[str, Any], ctx: ToolContext) -> Path | None:
    """The file an edit (``Tool.effect``: ``Edit``, ``Write``) would change; None for
    another tool, or a path the tool will refuse (and say why)."""
    if tool.effect != "edit":
        return None
    raw = args.get("file_path")
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return ctx.resolve(raw)
    except (PathRefusedError, OSError, ValueError):
        return None


__all__ = [
    "CONTEXT_LINES",
    "MODES",
    "Answer",
    "answer",
    "bounded_diff",
    "options",
    "preview",
]
