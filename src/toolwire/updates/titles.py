"""What the editor shows for a tool call: title, ACP kind and locations.

Derived from the tool's name and whichever top-level arguments are complete so far, so
the card reads "Read src/app.py" as soon as ``file_path`` is complete, long before the
rest of the arguments (claude-agent-acp#867: generic titles until the input finished).
The agent's tools are named like Claude Code's (docs/design.md, "The agent's tools");
common aliases of other agents map to the same describers. Unknown tools show their name.

Pure functions: paths are resolved against the session ``cwd`` as strings (ACP wants
absolute ``locations``), never touching the filesystem.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from toolwire.updates.wire import JsonObject, ToolKind, location

TITLE_MAX: Final = 80
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Description:
    """Title, kind and locations of a call, from what is known of its arguments."""

    title: str
    kind: ToolKind
    locations: tuple[JsonObject, ...] = ()


def shorten(text: str, limit: int = TITLE_MAX) -> str:
    """One line of at most ``limit`` characters: the first line, spaces collapsed."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    first = _SPACES.sub(" ", lines[0].strip())
    more = len(lines) > 1
    if len(first) > limit - (2 if more else 0):
        return first[: limit - 1].rstrip() + "…"
    return first + (" …" if more else "")


def display_path(path: str, cwd: str | None) -> str:
    """An absolute, normalized ``path`` as people read it: relative to ``cwd`` when inside
    it (``.`` for ``cwd`` itself), else unchanged (also when no ``cwd`` is known).

    The one rule for titles, tool results and handoff summaries; lexical, so it never
    touches the file system.
    """
    if not cwd:
        return path
    root = os.path.normpath(cwd)
    if path == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path[len(prefix) :] if path.startswith(prefix) else path


def resolve(path: str, cwd: str) -> tuple[str, str]:
    """``(display, absolute)``: display is relative when inside ``cwd``."""
    absolute = os.path.normpath(os.path.join(cwd, path))
    return display_path(absolute, cwd), absolute


def _text(args: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _int(args: Mapping[str, Any], key: str) -> int | None:
    value = args.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


_PATH_KEYS: Final = ("file_path", "path", "filepath", "filename", "absolute_path")


def _file_tool(verb: str, kind: ToolKind) -> Callable[[Mapping[str, Any], str], Description]:
    def describe(args: Mapping[str, Any], cwd: str) -> Description:
        path = _text(args, *_PATH_KEYS)
        if path is None:
            return Description(f"{verb} file", kind)
        shown, absolute = resolve(path, cwd)
        title = f"{verb} {shown}"
        line = _int(args, "offset") if verb == "Read" else None
        limit = _int(args, "limit") if verb == "Read" else None
        if line is not None and limit is not None:
            title += f" (lines {line}-{line + max(limit - 1, 0)})"
        elif line is not None:
            title += f" (from line {line})"
        return Description(title, kind, (location(absolute, line),))

    return describe


def _bash(args: Mapping[str, Any], cwd: str) -> Description:
    command = _text(args, "command", "cmd")
    if command is None:
        return Description("Run command", "execute")
    return Description(shorten(command) or "Run command", "execute")


def _pattern_tool(verb: str) -> Callable[[Mapping[str, Any], str], Description]:
    def describe(args: Mapping[str, Any], cwd: str) -> Description:
        pattern = _text(args, "pattern", "query", "regex")
        if pattern is None:
            return Description(verb, "search")
        title = f'{verb} "{shorten(pattern, TITLE_MAX // 2)}"'
        where = _text(args, "path")
        if where is not None:
            title += f" in {resolve(where, cwd)[0]}"
        glob = _text(args, "glob")
        if glob is not None:
            title += f" ({shorten(glob, 30)})"
        return Description(shorten(title), "search")

    return describe


def _todos(args: Mapping[str, Any], cwd: str) -> Description:
    todos = args.get("todos")
    if isinstance(todos, list):
        return Description(f"Update todos ({len(todos)})", "think")
    return Description("Update todos", "think")


def _web_fetch(args: Mapping[str, Any], cwd: str) -> Description:
    # Host and path as soon as ``url`` is complete: what is fetched from where, without
    # a query string that may be long (or carry a token).
    url = _text(args, "url")
    if url is None:
        return Description("Fetch", "fetch")
    try:
        parts = urlsplit(url.strip())
        where = (parts.hostname or "") + (parts.path if parts.path != "/" else "")
    except ValueError:
        where = ""
    return Description(f"Fetch {shorten(where or url, 70)}", "fetch")


def _web_search(args: Mapping[str, Any], cwd: str) -> Description:
    # The query as it streams in: the card says what is searched before results exist.
    query = _text(args, "query")
    return Description(
        f"Search the web: {shorten(query, 70)}" if query else "Search the web", "search"
    )


#: The tools' names as other agents spell them (folded: lower case, no ``_`` or ``-``),
#: each mapped to the name of toolwire's tool (Claude Code's) that does the same. Titles
#: use it for live cards, the handoff for imported transcripts.
TOOL_ALIASES: Final[Mapping[str, str]] = {
    **dict.fromkeys(("read", "readfile", "viewfile"), "Read"),
    **dict.fromkeys(("write", "writefile", "createfile"), "Write"),
    **dict.fromkeys(("edit", "editfile", "multiedit", "strreplace", "notebookedit"), "Edit"),
    **dict.fromkeys(
        ("bash", "shell", "runcommand", "runshellcommand", "execcommand", "executecommand"),
        "Bash",
    ),
    **dict.fromkeys(("grep", "searchfiles"), "Grep"),
    **dict.fromkeys(("glob", "findfiles"), "Glob"),
    "todowrite": "TodoWrite",
    "webfetch": "WebFetch",
    "websearch": "WebSearch",
}


def canonical_tool(name: str) -> str | None:
    """The toolwire tool ``name`` stands for (``read_file`` -> ``Read``), or None."""
    return TOOL_ALIASES.get(name.lower().replace("_", "").replace("-", ""))


_DESCRIBERS: Final[dict[str, Callable[[Mapping[str, Any], str], Description]]] = {
    "Read": _file_tool("Read", "read"),
    "Write": _file_tool("Write", "edit"),
    "Edit": _file_tool("Edit", "edit"),
    "Bash": _bash,
    "Grep": _pattern_tool("Search"),
    "Glob": _pattern_tool("Find"),
    "TodoWrite": _todos,
    "WebFetch": _web_fetch,
    "WebSearch": _web_search,
}


Describer = Callable[[Mapping[str, Any], str], Description]
"""Title, kind and locations from the arguments known so far and the session's cwd."""


def describe(
    name: str, args: Mapping[str, Any], cwd: str, extra: Mapping[str, Describer] | None = None
) -> Description:
    """Title, kind and locations for tool ``name`` given the arguments known so far.

    ``extra`` describes tools the session added (its MCP servers' tools), by exact name.
    """
    describer = extra.get(name) if extra else None
    if describer is None:
        describer = _DESCRIBERS.get(canonical_tool(name) or "")
    if describer is not None:
        return describer(args, cwd)
    path = _text(args, *_PATH_KEYS)
    locations = (location(resolve(path, cwd)[1]),) if path is not None else ()
    return Description(name or "Tool", "other", locations)


__all__ = [
    "TITLE_MAX",
    "TOOL_ALIASES",
    "Describer",
    "Description",
    "canonical_tool",
    "describe",
    "display_path",
    "resolve",
    "shorten",
]
