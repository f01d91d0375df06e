"""The README's commands and options are the CLI's: no flag documented that does not exist,
and the command table lists every command with exactly its options."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from toolwire.cli import app

README = Path(__file__).resolve().parents[2] / "README.md"
_FLAG = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")


def cli_commands() -> dict[str, Any]:
    """Every leaf command by its words (``"proxy switch"``), as click sees it."""
    found: dict[str, Any] = {}
    todo: list[tuple[str, Any]] = [("", typer.main.get_command(app))]
    while todo:
        words, command = todo.pop()
        subcommands = getattr(command, "commands", None)
        if subcommands:
            todo += [(f"{words} {name}".strip(), sub) for name, sub in subcommands.items()]
        else:
            found[words] = command
    return found


def cli_flags(command: Any) -> set[str]:
    flags: set[str] = set()
    for param in command.params:
        if param.param_type_name == "option":
            flags.update(param.opts, param.secondary_opts)
    return flags


def split(usage: str, commands: dict[str, Any]) -> tuple[str, set[str]]:
    """The command words a usage line names, and the flags it shows."""
    words = usage.split()[1:]
    name = ""
    for word in words:
        if f"{name} {word}".strip() not in commands and not any(
            c.startswith(f"{name} {word} ".lstrip()) for c in commands
        ):
            break
        name = f"{name} {word}".strip()
    assert name in commands, f"README names an unknown command: {usage}"
    return name, set(_FLAG.findall(usage.partition(" -- ")[0]))


def table_rows(text: str) -> list[str]:
    """The usage column of the README's command table."""
    return [u.replace("\\|", "|") for u in re.findall(r"^\| `(toolwire [^`]+)` \|", text, re.M)]


def code_lines(text: str) -> list[str]:
    """Every ``toolwire ...`` line inside a code block, continuation lines joined."""
    lines: list[str] = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            if line.startswith("toolwire "):
                lines.append(line)
            elif line[:1].isspace() and lines and lines[-1].startswith("toolwire "):
                lines[-1] += " " + line.strip()
    return lines


def test_the_command_table_lists_every_command_with_exactly_its_options() -> None:
    commands = cli_commands()
    documented = {}
    for usage in table_rows(README.read_text(encoding="utf-8")):
        name, flags = split(usage, commands)
        documented[name] = {f for f in flags if f.startswith("--")}
    assert set(documented) == set(commands)
    for name, flags in documented.items():
        long_flags = {f for f in cli_flags(commands[name]) if f.startswith("--")}
        assert flags == long_flags, name


def test_every_command_line_in_the_readme_uses_flags_that_exist() -> None:
    commands = cli_commands()
    text = README.read_text(encoding="utf-8")
    lines = code_lines(text) + table_rows(text)
    assert len(lines) > len(commands)
    for line in lines:
        name, flags = split(line.partition("#")[0] + line.partition("#")[2], commands)
        assert flags <= cli_flags(commands[name]), line


@pytest.mark.parametrize("name", sorted(cli_commands()))
def test_each_help_shows_its_own_options(name: str) -> None:
    result = CliRunner().invoke(app, [*name.split(), "--help"])
    assert result.exit_code == 0
    for flag in cli_flags(cli_commands()[name]):
        assert flag in result.stdout, (name, flag)
