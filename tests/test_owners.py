"""One owner writes its state: no module assigns a field of an object it does not own.

``OWNERS`` is the one table: each owned object, the module that owns it, the name it is
reached by (``session.rules``, a local ``conversation``) and its fields. An assignment to
one of those fields (``x.rules.mode = ...``, ``conversation.meter = ...``, also in a tuple
target or an augmented one) anywhere but the owner's module is a finding; so is
replacing a ``Session`` part (``session.conversation = ...``) outside ``session/state.py``.
The owner's other modules change it through its verbs (``docs/architecture.md``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

SRC = Path(__file__).resolve().parents[1] / "src" / "toolwire"


class Owner(NamedTuple):
    module: str  # relative to src/toolwire
    reached_as: str  # the attribute (or local name) the owned object is reached by
    fields: frozenset[str]


_STATE = "agent/session/state.py"

OWNERS: dict[str, Owner] = {
    "SessionIdentity": Owner(
        _STATE,
        "who",
        frozenset({"id", "cwd", "additional_dirs", "parent", "label", "tool_names"}),
    ),
    "SessionServices": Owner(
        _STATE,
        "services",
        frozenset(
            {"outbox", "tools", "instructions", "hook_state", "call_ids", "told", "mcp"}
            | {"mcp_start", "_mcp", "_mcp_start"}
        ),
    ),
    "ModelChoice": Owner(
        _STATE, "model", frozenset({"active", "pending", "rerouted", "thought", "backend"})
    ),
    "Permissions": Owner(
        _STATE, "rules", frozenset({"mode", "always", "never", "unsandboxed", "terminal_refused"})
    ),
    "TurnState": Owner(
        "agent/session/turn_state.py",
        "turn",
        frozenset({"phase", "task", "_idle", "_cancels", "_steering", "_steered", "_task_tool"}),
    ),
    "Conversation": Owner(
        "conversation/core.py",
        "conversation",
        frozenset({"history", "offset", "handoff", "meter", "_point", "_saved"}),
    ),
}
#: The parts of a ``Session``: replaced only by the module that defines it.
SESSION_PARTS = frozenset({"who", "services", "model", "rules", "conversation", "turn"})


def _targets(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from _flat(target)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        yield from _flat(node.target)


def _flat(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        for item in target.elts:
            yield from _flat(item)
    else:
        yield target


def _reached_as(base: ast.expr) -> str | None:
    """``x.rules`` -> "rules"; a local ``conversation`` -> "conversation"."""
    if isinstance(base, ast.Attribute):
        return base.attr
    if isinstance(base, ast.Name):
        return base.id
    return None


def _session_like(base: ast.expr) -> bool:
    """``session``, ``self.session``, ``parent``, ``child``: what names a Session."""
    name = _reached_as(base)
    return name in {"session", "parent", "child"}


def findings(path: Path, rel: str) -> list[str]:
    """The assignments in ``path`` to fields its module does not own."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        for target in _targets(node):
            if not isinstance(target, ast.Attribute):
                continue
            where = f"{rel}:{target.lineno}: {ast.unparse(target)}"
            reached = _reached_as(target.value)
            for name, owner in OWNERS.items():
                owned = reached == owner.reached_as and target.attr in owner.fields
                if owned and rel != owner.module:
                    found.append(f"{where} ({name} is owned by {owner.module})")
            if target.attr in SESSION_PARTS and _session_like(target.value) and rel != _STATE:
                found.append(f"{where} (a Session part is replaced only in {_STATE})")
    return found


def test_no_module_assigns_a_field_it_does_not_own() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        found += findings(path, path.relative_to(SRC).as_posix())
    assert not found, "assigned outside their owner:\n" + "\n".join(found)


def test_the_check_sees_each_kind_of_assignment(tmp_path: Path) -> None:
    """The finder itself: plain, tuple, augmented and part-replacing writes are found."""
    code = tmp_path / "bad.py"
    code.write_text(
        "session.rules.mode = 'plan'\n"
        "a, self.session.model.pending = 1, 'x'\n"
        "session.services.call_ids |= {'c'}\n"
        "conversation.meter = None\n"
        "session.conversation = other\n"
        "self.session.turn.phase = 'idle'\n"
        "self.phase = 'idle'\n"  # an owner's own write, in any module: not a finding
        "settings.mode = 'x'\n",  # not reached through an owned part
        encoding="utf-8",
    )
    lines = [f.split(":")[1] for f in findings(code, "agent/features/bad.py")]
    assert lines == ["1", "2", "3", "4", "5", "6"]
