"""Tool names a provider accepts, and the way back to the names the agent offered.

Each provider restricts function names (docs/backends.md, "Tool schemas per provider").
A name that already fits is sent as it is (``mcp__everything__get-sum`` stays so); one
that does not is rewritten deterministically: every rejected character becomes ``_``,
and a short hash of the original name is appended, so two names never meet on the wire
and adding a tool never renames another (the prompt cache keeps its prefix). The model
answers with the wire name; ``ToolNames.original`` maps it back before anyone looks the
tool up. The map is a pure function of the offered names, so the builder and the stream
each compute it from the same request instead of sharing state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from toolwire.events import Event, ToolCallStart
from toolwire.history import ToolSpec
from toolwire.providers import PROFILES, NameRule, profile

ANTHROPIC: Final = PROFILES["anthropic"].name_rule
OPENAI: Final = PROFILES["openai-chat"].name_rule
GEMINI: Final = PROFILES["gemini"].name_rule


def rule_for(wire_format: str) -> NameRule | None:
    """Each wire format's rule, from its profile (a recorded response names the format,
    not the backend)."""
    found = profile(wire_format)
    return found.name_rule if found is not None else None


@dataclass(frozen=True, slots=True)
class ToolNames:
    """Offered name <-> wire name for one request (only the rewritten ones are stored)."""

    rule: NameRule
    to_wire: dict[str, str] = field(default_factory=dict)
    to_original: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, names: Iterable[str], rule: NameRule) -> ToolNames:
        """The map for the tools offered; collisions resolved in the order given."""
        offered = list(dict.fromkeys(names))
        taken = {n for n in offered if rule.accepts(n)}
        to_wire: dict[str, str] = {}
        for name in offered:
            if name in taken:
                continue
            salt = 0
            wire = rule.rewrite(name)
            while wire in taken:  # a hash clash with another name: astronomically rare
                salt += 1
                wire = rule.rewrite(name, salt)
            taken.add(wire)
            to_wire[name] = wire
        return cls(rule, to_wire, {w: n for n, w in to_wire.items()})

    def wire(self, name: str) -> str:
        """The name as sent; a name not offered this time (an older call) is rewritten alone."""
        if name in self.to_wire:
            return self.to_wire[name]
        return name if self.rule.accepts(name) else self.rule.rewrite(name)

    def original(self, wire: str) -> str:
        """The offered name for a name the model used (unknown names pass unchanged)."""
        return self.to_original.get(wire, wire)

    def restore(self, event: Event) -> Event:
        """``event`` with a call's wire name back to the offered one."""
        if isinstance(event, ToolCallStart) and event.name in self.to_original:
            return dataclasses.replace(event, name=self.to_original[event.name])
        return event


def rewritten(tools: Sequence[ToolSpec], rule: NameRule | None) -> ToolNames | None:
    """The map for ``tools`` when the rule rewrites any of their names, else None."""
    if rule is None or not tools:
        return None
    names = ToolNames.build((t.name for t in tools), rule)
    return names if names.to_wire else None


__all__ = ["ANTHROPIC", "GEMINI", "OPENAI", "NameRule", "ToolNames", "rewritten", "rule_for"]
