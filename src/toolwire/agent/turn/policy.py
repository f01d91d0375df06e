"""Who may run a tool call now: one rule for built-in and MCP tools alike.

``decide`` takes what a tool can do (its ``Traits``), the session's mode and the
session's rules (the tools the user chose to always allow or always reject, by name, for
the rest of the session; for a tool with a ``scope``, by name and scope: ``WebFetch`` is
allowed per host). First match wins:

1. ``bypass``: allow;
2. a tool the user chose to always reject: deny;
3. a tool that only reads: allow when it is built in, when its MCP server is trusted
   (``trusted = true``), or in a mode that refuses the rest (``read-only``, ``plan``);
4. a mode that refuses edits and commands: deny (a fetch changes nothing here, so it
   is not denied: it asks, as it sends data out);
5. a tool the user chose to always allow: allow;
6. a command that runs in the sandbox in ``workspace-write`` (``[tools.sandbox]``,
   ``ask = false``): allow; what it may touch is the session's directories;
7. ``accept-edits`` and a built-in edit: allow (an MCP tool that changes things is
   not known to change only the project's files, so it still asks);
8. otherwise: ask.

A denied call is answered with ``refusal``, a call the user rejected with ``rejected``:
the same words for every tool, so the model learns one rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, TypeAlias

from toolwire.config.choices import Mode
from toolwire.mcp import McpTool
from toolwire.tools import Effect, Tool

Decision: TypeAlias = Literal["allow", "ask", "deny"]

#: Modes in which edits and commands are refused (the model is told why).
REFUSING: Final[frozenset[Mode]] = frozenset({"read-only", "plan"})


@dataclass(frozen=True, slots=True)
class Traits:
    """What a permission decision needs to know of a tool.

    ``name`` is what the model calls it; ``scope`` what of its arguments a permission is
    for (``WebFetch``: the host), None for the whole tool; ``effect`` what a call can
    do; ``mcp`` and ``trusted`` where it comes from.
    """

    name: str
    effect: Effect
    mcp: bool = False
    trusted: bool = False
    scope: str | None = None
    sandboxed: bool = False
    """A command that runs in the sandbox, which then does not ask (rule 6)."""

    @property
    def rule(self) -> str:
        """The key "always" answers are kept under: the name, or name and scope."""
        return self.name if self.scope is None else f"{self.name} {self.scope}"

    @property
    def subject(self) -> str:
        """What the user is asked about ("Always allow docs.python.org")."""
        return self.scope or self.name


class Rules(Protocol):
    """A session's "always allow" and "always reject" answers, by tool name."""

    @property
    def always(self) -> Set[str]: ...

    @property
    def never(self) -> Set[str]: ...


@dataclass(frozen=True, slots=True)
class SessionRules:
    """``Rules`` as a value (a session is one too)."""

    always: Set[str] = field(default_factory=frozenset)
    never: Set[str] = field(default_factory=frozenset)


def builtin_traits(
    tool: Tool, args: Mapping[str, Any] | None = None, *, sandboxed: bool = False
) -> Traits:
    """A built-in tool, as it says (``Tool.effect``): a fetch is scoped by ``Tool.scope``
    of the call's ``args``; ``sandboxed``: its commands run in the sandbox in
    ``workspace-write`` and the user did not ask to be asked."""
    scope = tool.scope(args or {}) if tool.effect == "fetch" else None
    return Traits(
        tool.name, tool.effect, scope=scope, sandboxed=sandboxed and tool.kind == "execute"
    )


def mcp_traits(tool: McpTool) -> Traits:
    """An MCP tool: read-only when its server says so (``readOnlyHint``)."""
    effect: Effect = "read" if tool.read_only else "command"
    return Traits(tool.model_name, effect, mcp=True, trusted=tool.trusted)


def decide(traits: Traits, mode: Mode, rules: Rules) -> Decision:
    """Whether a call of the tool may run now in ``mode`` (module doc)."""
    if mode == "bypass":
        return "allow"
    if traits.name in rules.never or traits.rule in rules.never:
        return "deny"
    if traits.effect == "read" and (not traits.mcp or traits.trusted or mode in REFUSING):
        return "allow"
    if mode in REFUSING and traits.effect != "fetch":
        return "deny"
    if traits.rule in rules.always:
        return "allow"
    if traits.sandboxed and traits.effect == "command":
        return "allow"
    if mode == "accept-edits" and traits.effect == "edit" and not traits.mcp:
        return "allow"
    return "ask"


def refusal(traits: Traits, mode: Mode, rules: Rules) -> str:
    """The tool error for a call ``decide`` denied, for the model."""
    name = traits.name
    if traits.rule in rules.never and traits.scope is not None:
        return (
            f"Refused: the user chose to always reject {name} of {traits.scope} in this "
            "session. Do not call it again for that host; take another approach or ask the user."
        )
    if name in rules.never or mode not in REFUSING:
        return (
            f"Refused: the user chose to always reject {name} in this session. "
            "Do not call it again; take another approach or ask the user."
        )
    if traits.mcp:
        why = f"and {name} is not marked read-only by its server"
    else:
        why = f"so {name} cannot {'edit files' if traits.effect == 'edit' else 'run commands'}"
    if mode == "plan":
        return (
            f"Refused: the session is in plan mode, {why}. Read and search as needed, then "
            "end your turn by presenting the plan; the user is asked whether to carry it out."
        )
    return (
        f"Refused: the session is in read-only mode, {why}. "
        "Tell the user what you would change, or ask them to switch the mode."
    )


def rejected(traits: Traits) -> str:
    """The tool error when the user said no."""
    return (
        f"The user rejected this {traits.name} call; nothing was changed. "
        "Do not retry it as is: ask the user how to proceed, or take another approach."
    )


__all__ = [
    "REFUSING",
    "Decision",
    "Effect",
    "Rules",
    "SessionRules",
    "Traits",
    "builtin_traits",
    "decide",
    "mcp_traits",
    "refusal",
    "rejected",
]
