"""``TodoWrite``: the model's task list, shown in the editor as an ACP ``plan``.

Each call sends the complete list (ACP ``plan`` updates replace the whole plan too).
The result's ``plan`` holds the entries for the agent to send as a ``plan`` update;
``activeForm`` (the present-continuous label, "Running tests") is kept in
``raw_output`` only, since ACP plan entries have no place for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, cast

from toolwire.tools.base import PlanEntry, PlanPriority, PlanStatus, Tool, ToolError, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.updates.titles import Description, todos_call

STATUSES: tuple[PlanStatus, ...] = ("pending", "in_progress", "completed")
PRIORITIES: tuple[PlanPriority, ...] = ("high", "medium", "low")
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}

DESCRIPTION = """\
Creates and updates a task list for the current work; the user sees it as a plan.

- Use it for work with several steps: write the steps first, then keep the list
  current as you go. Each call sends the COMPLETE list, not a change.
- todos: [{content, status, activeForm}]. content says what to do ("Run the tests"),
  activeForm says it in progress ("Running the tests"); status is pending, in_progress
  or completed.
- Keep exactly one item in_progress while working, and mark items completed as soon
  as they are done."""

_TODO_SCHEMA = {
    "type": "object",
    "properties": {
        "content": {"type": "string", "minLength": 1},
        "status": {"type": "string", "enum": list(STATUSES)},
        "activeForm": {"type": "string"},
    },
    "required": ["content", "status"],
}


class TodoWriteTool(Tool):
    """The ``TodoWrite`` tool."""

    name = "TodoWrite"
    description = DESCRIPTION
    kind = "think"
    effect = "read"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": _TODO_SCHEMA,
                "description": "The complete, updated task list.",
            },
        },
        "required": ["todos"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """How many entries the list has."""
        return todos_call(self.kind, args)

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        todos = args.get("todos")
        if not isinstance(todos, list):
            raise ToolError("Argument 'todos' must be an array of {content, status} objects.")
        items = [_todo(i, item) for i, item in enumerate(todos)]
        entries = tuple(
            PlanEntry(content=t["content"], status=t["status"], priority=t["priority"])
            for t in items
        )
        return ToolResult(
            content=_summary(entries),
            plan=entries,
            raw_output={"todos": items},
        )


def _todo(index: int, item: Any) -> dict[str, Any]:
    """One checked todo, as kept in ``raw_output``."""
    where = f"todos[{index}]"
    if not isinstance(item, Mapping):
        raise ToolError(f"{where} must be an object with content and status.")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ToolError(f"{where}.content must be a non-empty string.")
    status = item.get("status")
    if status not in STATUSES:
        raise ToolError(f"{where}.status must be one of {', '.join(STATUSES)}; got {status!r}.")
    priority = item.get("priority", "medium")
    if priority not in PRIORITIES:
        priority = "medium"  # an unknown priority is no reason to lose the plan
    todo: dict[str, Any] = {
        "content": content,
        "status": cast(PlanStatus, status),
        "priority": cast(PlanPriority, priority),
    }
    active = item.get("activeForm")
    if isinstance(active, str) and active:
        todo["activeForm"] = active
    return todo


def _summary(entries: tuple[PlanEntry, ...]) -> str:
    if not entries:
        return "The task list is now empty."
    counts = {s: sum(e.status == s for e in entries) for s in STATUSES}
    head = (
        f"Task list updated: {counts['completed']} completed, "
        f"{counts['in_progress']} in progress, {counts['pending']} pending."
    )
    lines = [f"{_MARKS[e.status]} {e.content}" for e in entries]
    return "\n".join([head, *lines])


__all__ = ["TodoWriteTool"]
