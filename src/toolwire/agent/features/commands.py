"""Slash commands: the built-ins and the user's Markdown ones, announced and parsed.

A prompt whose text starts with ``/NAME`` is a command when NAME is known; any other
``/text`` goes to the model as a normal prompt. Built-ins (``BUILTINS``) win over custom
commands of the same name. Custom commands are Markdown files, the file name (without
``.md``) the command and the body the prompt, ``$ARGUMENTS`` replaced by the input
(without it, the input is added after the body). Optional front matter between ``---``
lines gives ``description:`` and ``argument-hint:`` (simple ``key: value`` lines).

Where they are found, later ones shadowing earlier ones: the user's
``$XDG_CONFIG_HOME/toolwire/commands/``, then for each directory from the repository
root down to the session's cwd, ``.claude/commands/`` and ``.toolwire/commands/``. So
a project command shadows the user's. Files are read locally (the user's own files) and
looked up again at each prompt, so a new file works without reopening the session.
A project command file that is a link leading out of the project and the user's config
directory is not read (the rule of ``agent.instructions``); ``custom_commands`` reports it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire.agent.session.instructions import (
    Refused,
    leads_out,
    project_dirs,
    read_capped,
    repo_root,
    trusted_roots,
)
from toolwire.config.load import config_path
from toolwire.updates import builders

MAX_FILE_BYTES = 64 * 1024
log = logging.getLogger("toolwire.agent")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_INVOKE = re.compile(r"/(\S+)(?:\s+(.*))?", re.S)


@dataclass(frozen=True, slots=True)
class Command:
    """One command; ``body`` is None for a built-in (the agent runs it itself)."""

    name: str
    description: str
    hint: str | None = None
    body: str | None = None
    origin: str = "built-in"

    def wire(self) -> dict[str, Any]:
        """The ``AvailableCommand`` of the ``available_commands_update``."""
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.hint is not None:
            out["input"] = {"hint": self.hint}
        return out

    def expand(self, argument: str) -> str:
        """The prompt a custom command sends the model."""
        body = self.body or ""
        if "$ARGUMENTS" in body:
            return body.replace("$ARGUMENTS", argument)
        return f"{body}\n\n{argument}" if argument else body


BUILTINS: dict[str, Command] = {
    c.name: c
    for c in (
        Command(
            "compact",
            "Compact the conversation now: a summary plus the files and command output "
            "verbatim replace the earlier turns for the model.",
            "what the summary should focus on (optional)",
        ),
        Command(
            "model",
            "Switch the model (from the next prompt, with a handoff of the conversation).",
            "backend name (empty: list them)",
        ),
        Command("mode", "Switch the permission mode.", "mode name (empty: list them)"),
        Command(
            "init",
            "Survey the project and write an AGENTS.md with its instructions for agents "
            "(asks before writing).",
            "what to pay attention to (optional)",
        ),
        Command(
            "clear",
            "Start a fresh conversation in this session: the model no longer sees the "
            "earlier messages (the transcript keeps them).",
        ),
        Command(
            "rewind",
            "Go back to just before prompt N: its files, its conversation or both "
            "(empty: list the prompts; undo: take the last rewind back).",
            "N [code|conversation|both] [force], or undo (empty: list the prompts)",
        ),
    )
}


def command_dirs(cwd: str, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where custom commands are looked for, lowest precedence first."""
    dirs = [config_path(environ).parent / "commands"]
    for folder in project_dirs(cwd):
        dirs += [folder / ".claude" / "commands", folder / ".toolwire" / "commands"]
    return dirs


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """``(keys, body)``: the ``key: value`` lines between leading ``---`` lines."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            break
    else:
        return {}, text
    keys: dict[str, str] = {}
    for line in lines[1:end]:
        key, colon, value = line.partition(":")
        if colon and key.strip() and not key.startswith((" ", "\t", "#")):
            keys[key.strip().lower()] = value.strip().strip("\"'").strip()
    return keys, "".join(lines[end + 1 :]).lstrip("\n")


def load_command(path: Path) -> Command | None:
    """A custom command from its file; None when the name or file does not qualify."""
    name = path.name.removesuffix(".md")
    if not _NAME.fullmatch(name):
        return None
    try:
        data = read_capped(path, MAX_FILE_BYTES)
    except OSError as exc:  # a pipe or a device (``safe_read``), or unreadable
        log.warning("custom command %s skipped: %s", path, exc.strerror or exc)
        return None
    keys, body = front_matter(data.decode(errors="replace"))
    first = next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
    description = keys.get("description") or first[:80] or f"Custom command ({path})"
    hint = keys.get("argument-hint") or (
        "input for the command" if "$ARGUMENTS" in body else "text added to the prompt (optional)"
    )
    return Command(name, description, hint, body.strip(), str(path))


def custom_commands(
    cwd: str, environ: Mapping[str, str] | None = None, refused: list[Refused] | None = None
) -> dict[str, Command]:
    """The custom commands of a session in ``cwd`` (built-in names left out), by name.

    Project files that link out of the project are left out, and added to ``refused``.
    """
    found: dict[str, Command] = {}
    user, *project = command_dirs(cwd, environ)
    roots = trusted_roots(cwd, environ)
    for folder in (user, *project):
        try:
            files = sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
        except OSError:
            continue
        for path in files:
            out = None if folder is user else leads_out(path, roots)
            if out is not None:
                if refused is not None:
                    refused.append(out)
                continue
            command = load_command(path)
            if command is not None and command.name not in BUILTINS:
                found[command.name] = command
    return found


def available(custom: Mapping[str, Command]) -> list[Command]:
    """Built-ins first, then the custom commands by name."""
    return [*BUILTINS.values(), *(custom[name] for name in sorted(custom))]


def commands_update(custom: Mapping[str, Command] | None = None) -> builders.CommandsUpdate:
    """The ``available_commands_update`` every session gets after it opens."""
    return builders.commands_update([c.wire() for c in available(custom or {})])


def init_prompt(cwd: str, focus: str) -> str:
    """The prompt behind ``/init``."""
    root = repo_root(cwd)
    extra = f"\n\nPay particular attention to: {focus}" if focus else ""
    return (
        f"Survey this project and write an AGENTS.md at its root ({root / 'AGENTS.md'}): "
        "the standing instructions a coding agent working here needs.\n\n"
        "First look around: the README and docs, the build and package files, the "
        "directory layout, the test setup, CI configuration, linters and formatters, and "
        "any existing AGENTS.md, CLAUDE.md, GEMINI.md or similar instruction files. Then "
        "write a concise AGENTS.md (aim for well under 200 lines) covering:\n"
        "- what the project is, in two or three sentences;\n"
        "- how to install, build, run, test (a single test too), lint and format, with "
        "the exact commands;\n"
        "- the layout: where things live and which parts depend on which;\n"
        "- code style and conventions that are not obvious from one file;\n"
        "- anything surprising: generated files, required environment, pitfalls.\n\n"
        "Write only what you verified in the files; no generic advice. If an AGENTS.md "
        "exists, improve it rather than starting over, and keep what is still true. "
        "Use the Write (or Edit) tool for the file, then say in a sentence or two what "
        "you wrote." + extra
    )


def resolve(
    typed: str, custom: Mapping[str, Command], cwd: str
) -> tuple[str, tuple[Command, str] | None]:
    """What a prompt typed as ``typed`` is: the text for the model (a custom command's
    or ``/init``'s prompt, else ``typed`` itself), or a built-in command the agent runs
    (with its argument)."""
    command = parse_command(typed, custom)
    if command is not None and command[0].body is not None:
        return command[0].expand(command[1]), None
    if command is not None and command[0].name == "init":
        return init_prompt(cwd, command[1]), None
    return typed, command


def parse_command(
    text: str, custom: Mapping[str, Command] | None = None
) -> tuple[Command, str] | None:
    """``/compact focus`` -> ``(BUILTINS["compact"], "focus")``; None for anything else."""
    matched = _INVOKE.fullmatch(text.strip())
    if matched is None:
        return None
    name, argument = matched.group(1), (matched.group(2) or "").strip()
    command = BUILTINS.get(name) or (custom or {}).get(name)
    return None if command is None else (command, argument)


__all__ = [
    "BUILTINS",
    "Command",
    "available",
    "command_dirs",
    "commands_update",
    "custom_commands",
    "front_matter",
    "init_prompt",
    "load_command",
    "parse_command",
    "resolve",
]
