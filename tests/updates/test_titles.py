"""Titles, kinds and locations from a tool's name and the arguments known so far."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.handoff.extract import category_of
from toolwire.updates.titles import (
    TITLE_MAX,
    TOOL_ALIASES,
    canonical_tool,
    describe,
    display_path,
    resolve,
    shorten,
)

CWD = "/work/proj"


@pytest.mark.parametrize(
    ("name", "args", "title", "kind", "locations"),
    [
        ("Read", {}, "Read file", "read", ()),
        (
            "Read",
            {"file_path": "src/app.py"},
            "Read src/app.py",
            "read",
            ({"path": f"{CWD}/src/app.py"},),
        ),
        (
            "Read",
            {"file_path": "/etc/hosts", "offset": 10, "limit": 5},
            "Read /etc/hosts (lines 10-14)",
            "read",
            ({"path": "/etc/hosts", "line": 10},),
        ),
        ("Write", {"file_path": "a/../b.txt"}, "Write b.txt", "edit", ({"path": f"{CWD}/b.txt"},)),
        (
            "Edit",
            {"file_path": "x.py", "old_string": "a"},
            "Edit x.py",
            "edit",
            ({"path": f"{CWD}/x.py"},),
        ),
        ("Bash", {}, "Run command", "execute", ()),
        ("Bash", {"command": "pytest -q  tests/"}, "pytest -q tests/", "execute", ()),
        ("Grep", {"pattern": "TODO", "path": "src"}, 'Search "TODO" in src', "search", ()),
        ("Glob", {"pattern": "**/*.py"}, 'Find "**/*.py"', "search", ()),
        ("TodoWrite", {"todos": [{}, {}]}, "Update todos (2)", "think", ()),
        ("read_file", {"path": "r.md"}, "Read r.md", "read", ({"path": f"{CWD}/r.md"},)),
        ("get_weather", {"city": "Paris"}, "get_weather", "other", ()),
        ("mystery", {"path": "m.txt"}, "mystery", "other", ({"path": f"{CWD}/m.txt"},)),
    ],
)
def test_describe(
    name: str, args: dict[str, Any], title: str, kind: str, locations: tuple[Any, ...]
) -> None:
    found = describe(name, args, CWD)
    assert (found.title, found.kind, found.locations) == (title, kind, locations)


def test_location_paths_are_absolute_and_titles_relative() -> None:
    assert resolve("src/a.py", CWD) == ("src/a.py", f"{CWD}/src/a.py")
    assert resolve("/tmp/x", CWD) == ("/tmp/x", "/tmp/x")
    assert resolve("../other/x", CWD) == ("/work/other/x", "/work/other/x")
    assert resolve(".", CWD) == (".", CWD)


def test_one_rule_shows_a_path_relative_to_the_cwd() -> None:
    """Titles, tool results (``ToolContext.show``) and handoff labels all use it."""
    assert display_path(f"{CWD}/src/a.py", CWD) == "src/a.py"
    assert display_path(f"{CWD}/src/a.py", CWD + "/") == "src/a.py"
    assert display_path(CWD, CWD) == "."
    assert display_path(f"{CWD}x/a.py", CWD) == f"{CWD}x/a.py", "a sibling is not inside"
    assert display_path("/etc/hosts", CWD) == "/etc/hosts"
    assert display_path("/etc/hosts", "/") == "etc/hosts"
    assert display_path("src/a.py", None) == "src/a.py", "no cwd known: as given"


def test_long_and_multiline_commands_are_shortened() -> None:
    long = "echo " + "x" * 200
    assert len(shorten(long)) == TITLE_MAX
    assert shorten(long).endswith("…")
    assert shorten("cd src\nmake all") == "cd src …"
    assert shorten("\n\n  ls   -la  \n") == "ls -la"
    found = describe("Bash", {"command": "python - <<'EOF'\nprint(1)\nEOF"}, CWD)
    assert found.title == "python - <<'EOF' …"


def test_non_string_arguments_are_ignored() -> None:
    assert describe("Read", {"file_path": 42}, CWD).title == "Read file"
    assert describe("Read", {"file_path": "a", "offset": True}, CWD).title == "Read a"


@pytest.mark.parametrize("alias", sorted(TOOL_ALIASES))
def test_every_alias_names_the_same_tool_for_titles_and_the_handoff(alias: str) -> None:
    """One alias table: a live card and a handoff summary agree on what a name means."""
    canonical = TOOL_ALIASES[alias]
    spelled = alias.upper() if len(alias) % 2 else alias
    assert canonical_tool(spelled) == canonical
    assert describe(spelled, {}, CWD).kind == describe(canonical, {}, CWD).kind
    expected = {"Read": "read", "Write": "change", "Edit": "change", "Bash": "command"}
    assert category_of(spelled) == expected.get(canonical, "other")
    assert canonical_tool("read_file") == canonical_tool("Read-File") == "Read"
    assert canonical_tool("frobnicate") is None
