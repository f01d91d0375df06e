"""What a hook is given and what its answer means, per event, as in Claude Code.

A hook gets one JSON object on standard input (``hook_input``): ``session_id``,
``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name`` and the event's own
fields (``tool_name``, ``tool_input``, ``tool_use_id``, ``tool_response``, ``prompt``,
``stop_hook_active``, ``source``, ``trigger``, ``custom_instructions``).

It answers with its exit code and output (``Outcome``); ``verdict`` folds the answers of
every hook an event ran into one ``Verdict``:

* exit 2 blocks: standard error is the reason (for the model on ``PreToolUse``,
  ``PostToolUse`` and ``Stop``; for the user on ``UserPromptSubmit``, which drops the
  prompt; ``SessionStart`` and ``PreCompact`` cannot be blocked, so it is only shown);
* exit 0 with a JSON object on standard output: ``decision: "block"`` and ``reason``
  block the same way; ``hookSpecificOutput.permissionDecision`` (``allow``, ``deny``,
  ``ask``; deny wins over ask over allow) and its ``permissionDecisionReason`` decide a
  ``PreToolUse`` call (the older ``decision: "approve"`` is an allow);
  ``hookSpecificOutput.additionalContext`` adds context for the model; ``systemMessage``
  is shown to the user;
* exit 0 with plain text: context for the model on ``UserPromptSubmit`` and
  ``SessionStart``, nothing elsewhere;
* any other exit, or a timeout: shown to the user, and nothing is blocked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from toolwire.hooks.settings import Event

Permission: TypeAlias = Literal["allow", "deny", "ask"]
CONTEXT_EVENTS: Final[frozenset[Event]] = frozenset({"UserPromptSubmit", "SessionStart"})
"""Events whose plain standard output is context for the model."""
BLOCKING: Final[frozenset[Event]] = frozenset(
    {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"}
)
_RANK: Final[dict[Permission, int]] = {"allow": 0, "ask": 1, "deny": 2}


def hook_input(
    event: Event,
    *,
    session_id: str,
    transcript_path: str,
    cwd: str,
    permission_mode: str,
    **fields: Any,
) -> dict[str, Any]:
    """The JSON object a hook of ``event`` reads on standard input."""
    return {
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": cwd,
        "permission_mode": permission_mode,
        "hook_event_name": event,
        **fields,
    }


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one hook command ended. ``exit_code`` is None when it was killed on timeout."""

    command: str
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timeout: float = 0.0


@dataclass(slots=True)
class Verdict:
    """What the hooks of one event decided together.

    ``blocked`` with its ``reasons``; ``permission`` (``PreToolUse``: the strongest
    decision any hook gave, None when none did) with ``permission_reasons``; ``context``
    for the model; ``shown``: lines for the user (failures, system messages).
    """

    blocked: bool = False
    reasons: list[str] = field(default_factory=list)
    permission: Permission | None = None
    permission_reasons: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """The reasons of a block (or a deny), one per line."""
        return "\n".join(r for r in [*self.reasons, *self.permission_reasons] if r)


def verdict(event: Event, outcomes: Iterable[Outcome]) -> Verdict:
    """The answers of every hook ``event`` ran, as one ``Verdict`` (module doc)."""
    result = Verdict()
    for outcome in outcomes:
        _fold(event, outcome, result)
    return result


def _fold(event: Event, outcome: Outcome, into: Verdict) -> None:
    command, err = outcome.command, outcome.stderr.strip()
    if outcome.exit_code is None:
        into.shown.append(f"{event} hook `{command}` timed out after {outcome.timeout:g} s.")
        return
    if outcome.exit_code == 2:
        if event in BLOCKING:
            into.blocked = True
            into.reasons.append(err or f"blocked by `{command}`")
        elif err:
            into.shown.append(f"{event} hook `{command}`: {err}")
        return
    if outcome.exit_code != 0:
        detail = f": {err}" if err else ""
        into.shown.append(f"{event} hook `{command}` failed (exit {outcome.exit_code}){detail}")
        return
    answer = _json(outcome.stdout)
    if answer is None:
        text = outcome.stdout.strip()
        if text and event in CONTEXT_EVENTS:
            into.context.append(text)
        return
    _answered(event, answer, into)


def _answered(event: Event, answer: Mapping[str, Any], into: Verdict) -> None:
    reason = answer.get("reason")
    reason = reason if isinstance(reason, str) else ""
    decision = answer.get("decision")
    if decision == "block" and event in BLOCKING:
        into.blocked = True
        into.reasons.append(reason or "blocked by a hook")
    elif decision == "approve" and event == "PreToolUse":
        _permit(into, "allow", reason)
    message = answer.get("systemMessage")
    if isinstance(message, str) and message:
        into.shown.append(message)
    specific = answer.get("hookSpecificOutput")
    if not isinstance(specific, Mapping):
        return
    context = specific.get("additionalContext")
    if isinstance(context, str) and context:
        into.context.append(context)
    permission = specific.get("permissionDecision")
    if event == "PreToolUse" and permission in _RANK:
        why = specific.get("permissionDecisionReason")
        _permit(into, permission, why if isinstance(why, str) else "")


def _permit(into: Verdict, permission: Permission, reason: str) -> None:
    if into.permission is None or _RANK[permission] > _RANK[into.permission]:
        into.permission = permission
        into.permission_reasons = [reason] if reason else []
    elif permission == into.permission and reason:
        into.permission_reasons.append(reason)


def _json(stdout: str) -> Mapping[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # nested too deeply to parse: not an answer
        return None
    return value if isinstance(value, Mapping) else None


__all__ = [
    "BLOCKING",
    "CONTEXT_EVENTS",
    "Outcome",
    "Permission",
    "Verdict",
    "hook_input",
    "verdict",
]
