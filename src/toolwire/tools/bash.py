"""``Bash``: run a shell command in the session's working directory.

The command runs through the context's terminal port (a client terminal in the editor,
or a local subprocess), with its combined output streamed to ``ctx.on_output`` while it
runs and a head + tail of it returned to the model. ``timeout`` is in milliseconds, as
in the tool models are trained on; it defaults to
``ToolLimits.bash_default_timeout_s`` and is clamped to ``ToolLimits.bash_max_timeout_s``.
A non-zero exit code or a timeout makes the result an error, with the output kept: the
model needs both to fix what failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from toolwire.tools.args import optional_bool, optional_number, optional_str, required_str
from toolwire.tools.base import CommandOutcome, Tool, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.tools.terminal import CommandResult
from toolwire.updates.titles import Description, command_call

DESCRIPTION = """\
Runs a shell command with bash in the working directory and returns its combined
stdout and stderr, and the exit code when it is not 0.

- command: the command line to run. Each call starts a fresh shell in the working
  directory: `cd` and variables do not carry over to the next call (chain with &&).
- timeout: optional, in milliseconds (default 120000, at most 600000). The command and
  everything it started are killed when it runs out.
- description: a short description of what the command does, in 5-10 words.
- run_in_background: start a long-running command (a server, a watcher) and return at
  once; its output goes to a log file you can read later.
- Long output is cut in the middle. Prefer Read, Grep and Glob over cat, grep and find.
- Commands cannot read input: use non-interactive flags."""


class BashTool(Tool):
    """The ``Bash`` tool."""

    name = "Bash"
    description = DESCRIPTION
    kind = "execute"
    effect = "command"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run."},
            "timeout": {
                "type": "number",
                "minimum": 1,
                "maximum": 600000,
                "description": "Timeout in milliseconds (default 120000, max 600000).",
            },
            "description": {
                "type": "string",
                "description": "What the command does, in 5-10 words.",
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Start the command and return without waiting for it.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """The command's first line."""
        return command_call(self.kind, args)

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        command = required_str(args, "command", allow_empty=False)
        optional_str(args, "description")  # only for the editor's title; checked for type
        timeout_s = _timeout_seconds(args, ctx)
        if optional_bool(args, "run_in_background"):
            return await _start_background(command, ctx)
        result = await ctx.terminal.run(
            command,
            cwd=ctx.cwd,
            timeout=timeout_s,
            on_output=ctx.on_output,
            max_output_bytes=ctx.limits.output_max_bytes,
        )
        outcome = CommandOutcome(
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            timeout_s=timeout_s,
            output_chars=result.output_chars,
            truncated=result.truncated,
        )
        raw = outcome.raw()
        if result.terminal_id is not None:
            raw["terminal_id"] = result.terminal_id
        return ToolResult(
            content=_describe(result, timeout_s),
            is_error=result.timed_out or result.exit_code != 0,
            raw_output=raw,
            command=outcome,
            terminal_id=result.terminal_id,
        )


def _timeout_seconds(args: Mapping[str, Any], ctx: ToolContext) -> float:
    timeout_ms = optional_number(args, "timeout", minimum=1)
    if timeout_ms is None:
        return ctx.limits.bash_default_timeout_s
    return min(timeout_ms / 1000, ctx.limits.bash_max_timeout_s)


async def _start_background(command: str, ctx: ToolContext) -> ToolResult:
    job = await ctx.terminal.start_background(command, cwd=ctx.cwd)
    parts = [f"Started in the background (process group {job.pid})."]
    if job.log_path:
        parts.append(f"Its output goes to {job.log_path}; read it with Bash `tail`.")
    if job.pid:
        parts.append(f"Stop it with `kill -- -{job.pid}`.")
    return ToolResult(
        content=" ".join(parts),
        raw_output={
            "background": True,
            "pid": job.pid,
            "log_path": job.log_path,
            "terminal_id": job.terminal_id,
        },
        terminal_id=job.terminal_id,
    )


def _describe(result: CommandResult, timeout_s: float) -> str:
    """The model's view: the output, then how the command ended when not cleanly."""
    text = result.output.rstrip("\n") or "(no output)"
    if result.timed_out:
        text += f"\n\n[Killed: the command did not finish within {timeout_s:g} s.]"
    elif result.exit_code is not None and result.exit_code < 0:
        text += f"\n\n[Killed by signal {-result.exit_code}.]"
    elif result.exit_code:
        text += f"\n\n[Exit code {result.exit_code}]"
    return text


__all__ = ["BashTool"]
