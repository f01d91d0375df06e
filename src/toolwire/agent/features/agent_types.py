"""The kinds of subagent the ``Task`` tool can start, and the tool as the model sees it.

A type is a Markdown file with front matter (``name``, ``description``, ``tools``: a comma
list of tool names, all when absent; ``model``: a configured backend name); its body is
the child's extra instructions. Read from ``.toolwire/agents/`` and ``.claude/agents/``
in the project, then ``~/.config/toolwire/agents/`` (the first of a name wins, so the
project's own beats the user's). Two are built in: ``general-purpose`` (every tool but
``Task``) and ``explore`` (the tools that only read). A file that does not qualify is
skipped with one line naming it (``AgentTypes.skipped``), never the whole set.

A child never gets ``Task`` itself: one level of children keeps the cost and the
editor's view bounded, and the model is told so in the tool's description.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from toolwire.agent.features.commands import front_matter
from toolwire.history import ToolSpec
from toolwire.safe_read import NotReadError, read_file
from toolwire.tools import TOOLS

TASK: Final = "Task"
DEFAULT_TYPE: Final = "general-purpose"
MAX_FILE_BYTES: Final = 64_000
_READ_ONLY_KINDS: Final = ("read", "search", "fetch")


@dataclass(frozen=True, slots=True)
class AgentType:
    """One kind of child: which tools it gets, which backend, what it is told."""

    name: str
    description: str
    tools: tuple[str, ...] | None = None
    """The tool names it may use; None: every tool (never ``Task``)."""
    model: str | None = None
    """A backend name; None: the parent's."""
    prompt: str = ""
    """The definition's body, added to the child's system prompt."""
    source: str = "built-in"

    def tool_names(self) -> tuple[str, ...]:
        """The built-in tools it gets, in registry order."""
        names = tuple(TOOLS) if self.tools is None else self.tools
        return tuple(name for name in TOOLS if name in names and name != TASK)


def _read_only() -> tuple[str, ...]:
    return tuple(n for n, t in TOOLS.items() if t.kind in _READ_ONLY_KINDS)


BUILT_IN: Final[tuple[AgentType, ...]] = (
    AgentType(
        DEFAULT_TYPE,
        "A general agent for a self-contained task: research, a change across files, "
        "a command to run and check.",
    ),
    AgentType(
        "explore",
        "Reads and searches the project without changing it; for finding where "
        "something is and how it works.",
        tools=_read_only(),
    ),
)


@dataclass(frozen=True, slots=True)
class AgentTypes:
    """The types a session offers (built-ins first) and the files that were skipped."""

    types: tuple[AgentType, ...] = BUILT_IN
    skipped: tuple[str, ...] = field(default=())

    def get(self, name: str) -> AgentType | None:
        return next((t for t in self.types if t.name == name), None)

    def spec(self) -> ToolSpec:
        """``Task`` as the model sees it: the types and their descriptions listed."""
        listed = "\n".join(f"- {t.name}: {t.description}" for t in self.types)
        description = (
            "Start a subagent: a separate model with its own conversation and tools that "
            "works on one task and answers once. It sees none of this conversation, so "
            "the prompt must say everything it needs. You get its final answer and what "
            "its tools read, changed and ran, verbatim. Several Task calls in one "
            "response run at the same time. Subagents cannot start subagents.\n\n"
            f"subagent_type is one of:\n{listed}"
        )
        return ToolSpec(TASK, description, _SCHEMA)


_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "description": "The task in 3 to 5 words."},
        "prompt": {"type": "string", "description": "The whole task for the subagent."},
        "subagent_type": {
            "type": "string",
            "description": f"Which kind of subagent (default {DEFAULT_TYPE}).",
        },
        "model": {
            "type": "string",
            "description": "A configured backend to run it on (default: its type's, else yours).",
        },
    },
    "required": ["description", "prompt"],
    "additionalProperties": False,
}


def agent_dirs(cwd: str, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where definitions are read from, first wins."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    home = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    root = Path(cwd)
    return [
        root / ".toolwire" / "agents",
        root / ".claude" / "agents",
        home / "toolwire" / "agents",
    ]


def load_agent_types(cwd: str, environ: Mapping[str, str] | None = None) -> AgentTypes:
    """The built-ins and every definition file found (blocking: run it off the loop)."""
    types = list(BUILT_IN)
    skipped: list[str] = []
    for folder in agent_dirs(cwd, environ):
        try:
            paths = sorted(p for p in folder.iterdir() if p.suffix == ".md")
        except OSError:
            continue
        for path in paths:
            made = _load(path)
            if isinstance(made, str):
                skipped.append(f"Skipped the agent definition {path}: {made}.")
            elif all(t.name != made.name for t in types):
                types.append(made)
    return AgentTypes(tuple(types), tuple(skipped))


def _load(path: Path) -> AgentType | str:
    """The type a file defines, or why it does not qualify."""
    try:
        data = read_file(path, MAX_FILE_BYTES)
    except NotReadError as exc:  # a pipe, a device, over the cap: never waited on or read whole
        return "it " + str(exc.strerror).removeprefix(f"{path} ")
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    keys, body = front_matter(data.decode(errors="replace"))
    name, description = keys.get("name", ""), keys.get("description", "")
    if not name or not description:
        return "its front matter needs a name and a description"
    if name == TASK or any(c.isspace() for c in name):
        return f"{name!r} is not a usable name"
    tools = None
    if listed := keys.get("tools"):
        tools = tuple(t.strip() for t in listed.split(",") if t.strip())
        unknown = [t for t in tools if t not in TOOLS]
        if unknown:
            return f"it names tools toolwire does not have ({', '.join(unknown)})"
    return AgentType(name, description, tools, keys.get("model") or None, body.strip(), str(path))


__all__ = [
    "BUILT_IN",
    "DEFAULT_TYPE",
    "TASK",
    "AgentType",
    "AgentTypes",
    "agent_dirs",
    "load_agent_types",
]
