"""``Write``: create a file or replace its whole content.

The result carries the change as a diff (old text, or None for a new file, and the new
text) for ACP ``diff`` content; the write itself is atomic (see ``fs.atomic_write``).
Missing parent directories are created, inside the session's directories only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from toolwire.tools.args import required_str
from toolwire.tools.base import Location, Tool, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.tools.files import count_lines, read_existing, save
from toolwire.tools.output import plural
from toolwire.updates.titles import Description, file_call

DESCRIPTION = """\
Writes a file, creating it or replacing all of its content.

- file_path: the file to write, absolute or relative to the working directory. Missing
  parent directories are created.
- content: the complete new content of the file.
- To change part of an existing file prefer Edit, which sends only the change.
- Read an existing file before overwriting it."""


class WriteTool(Tool):
    """The ``Write`` tool."""

    name = "Write"
    description = DESCRIPTION
    kind = "edit"
    effect = "edit"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The file to write."},
            "content": {"type": "string", "description": "The complete content to write."},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """The verb and the file."""
        return file_call("Write", self.kind, args, cwd)

    def proposed(self, args: Mapping[str, Any], old: str | None) -> str | None:
        """The content the call writes."""
        content = args.get("content")
        return content if isinstance(content, str) else None

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(required_str(args, "file_path", allow_empty=False))
        content = required_str(args, "content")
        async with ctx.locks.hold(path):
            old = await read_existing(ctx, path)
            diff = await save(ctx, path, old, content)
        shown = ctx.show(path)
        lines = count_lines(content)
        if old is None:
            message = f"Created {shown} ({plural(lines, 'line')})."
        elif old == content:
            message = f"{shown} already had this content; nothing changed."
        else:
            message = f"Wrote {shown} ({plural(lines, 'line')}; it had {count_lines(old)})."
        return ToolResult(
            content=message,
            diff=diff,
            locations=(Location(str(path)),),
            raw_output={
                "path": str(path),
                "created": old is None,
                "lines": lines,
                "bytes": len(content.encode("utf-8")),
            },
        )


__all__ = ["WriteTool"]
