"""``Edit``: replace an exact string in a file.

``old_string`` must occur exactly once unless ``replace_all`` is set; when it is not
found, or found several times, the file is left alone and the model is told what to do
instead. An empty ``old_string`` creates a new file (or fills an empty one). A file with
Windows line endings also matches an ``old_string`` written with ``\\n``: models rarely
reproduce ``\\r\\n``, and the replacement keeps the file's own line endings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from toolwire.tools.args import optional_bool, required_str
from toolwire.tools.base import Location, Tool, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.tools.errors import ToolError
from toolwire.tools.files import line_of, read_existing, save, snippet
from toolwire.updates.titles import Description, file_call

DESCRIPTION = """\
Replaces exact text in a file.

- file_path: the file to edit, absolute or relative to the working directory.
- old_string: the exact text to replace, including indentation and whitespace. Copy it
  from a Read result without the line-number prefix (number and tab).
- new_string: the text to put in its place (must differ from old_string).
- old_string must occur exactly once in the file; include enough surrounding lines to
  make it unique, or set replace_all to replace every occurrence (e.g. a rename).
- An empty old_string creates a new file with new_string as its content.
- Read the file before editing it."""


class EditTool(Tool):
    """The ``Edit`` tool."""

    name = "Edit"
    description = DESCRIPTION
    kind = "edit"
    effect = "edit"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The file to edit."},
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The replacement text."},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence of old_string (default false).",
            },
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """The verb and the file."""
        return file_call("Edit", self.kind, args, cwd)

    def proposed(self, args: Mapping[str, Any], old: str | None) -> str | None:
        """The file after the replacement, by the tool's own rules (``plan_edit``), so
        what is approved is what the tool will do."""
        try:
            return plan_edit(edit_args(args), old).new_text
        except ToolError:
            return None  # the tool will fail and say why; nothing to preview

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(required_str(args, "file_path", allow_empty=False))
        request = edit_args(args)
        async with ctx.locks.hold(path):
            old = await read_existing(ctx, path)
            plan = plan_edit(request, old, ctx.show(path))
            diff = await save(ctx, path, old, plan.new_text)
        first_line = line_of(plan.new_text, plan.first)
        last_line = first_line + request.new_string.count("\n")
        shown = ctx.show(path)
        what = f"Created {shown}" if old is None else f"Edited {shown}"
        times = "" if plan.count == 1 else f" ({plan.count} replacements)"
        return ToolResult(
            content=f"{what}{times}. The changed part now reads:\n"
            + snippet(plan.new_text, first_line, last_line),
            diff=diff,
            locations=(Location(str(path), first_line),),
            raw_output={"path": str(path), "replacements": plan.count, "line": first_line},
        )


@dataclass(frozen=True, slots=True)
class EditArgs:
    """The arguments of one ``Edit`` call, checked."""

    old_string: str
    new_string: str
    replace_all: bool = False


@dataclass(frozen=True, slots=True)
class EditPlan:
    """What an edit makes of a file: the new text, where the first replacement starts
    (an index into ``new_text``) and how many replacements were made."""

    new_text: str
    first: int
    count: int


def edit_args(args: Mapping[str, Any]) -> EditArgs:
    """The checked ``Edit`` arguments (the path aside); ``ToolError`` when they are wrong."""
    old_string = required_str(args, "old_string")
    new_string = required_str(args, "new_string")
    replace_all = optional_bool(args, "replace_all")
    if old_string == new_string:
        raise ToolError("old_string and new_string are identical; there is nothing to change.")
    return EditArgs(old_string, new_string, replace_all)


def plan_edit(args: EditArgs, old: str | None, shown: str = "the file") -> EditPlan:
    """The edit's outcome on a file whose text is ``old`` (None: no such file).

    Pure: the ``Edit`` tool and the approval preview both call it, so the diff the user
    approves is the change the tool makes. ``ToolError`` (naming ``shown``) when the edit
    cannot be made.
    """
    old_string, new_string = args.old_string, args.new_string
    if old is None:
        if old_string:
            raise ToolError(f"File does not exist: {shown}. To create it, use Write.")
        return EditPlan(new_string, 0, 1)
    if not old_string:
        if old:
            raise ToolError(
                f"old_string is empty but {shown} is not. Give the exact text to replace, "
                "or use Write to replace the whole file."
            )
        return EditPlan(new_string, 0, 1)
    old_string, new_string = _match_line_endings(old, old_string, new_string)
    count = old.count(old_string)
    if count == 0:
        raise ToolError(_not_found(old, old_string, shown))
    if count > 1 and not args.replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {shown}. Include more surrounding lines "
            "to make it unique, or set replace_all to true to replace every occurrence."
        )
    first = old.index(old_string)
    new = old.replace(old_string, new_string, -1 if args.replace_all else 1)
    return EditPlan(new, first, count if args.replace_all else 1)


def _match_line_endings(text: str, old_string: str, new_string: str) -> tuple[str, str]:
    """``old_string``/``new_string`` with CRLF endings when only that makes them match."""
    if "\r\n" not in text or "\n" not in old_string or "\r\n" in old_string:
        return old_string, new_string
    crlf = old_string.replace("\n", "\r\n")
    if old_string in text or crlf not in text:
        return old_string, new_string
    return crlf, new_string.replace("\r\n", "\n").replace("\n", "\r\n")


def _not_found(text: str, old_string: str, shown: str) -> str:
    message = f"old_string was not found in {shown}; the file was not changed."
    stripped = old_string.strip()
    if stripped and stripped != old_string and stripped in text:
        return message + " It matches once leading/trailing whitespace is removed: check them."
    if "\t" in old_string and old_string.split("\t", 1)[0].strip().isdigit():
        return message + " Do not include the line-number prefix from Read."
    return message + " Read the file again and copy the text exactly, indentation included."


__all__ = ["EditArgs", "EditPlan", "EditTool", "edit_args", "plan_edit"]
