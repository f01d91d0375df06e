"""What the editor shows for a tool call: title, ACP kind and locations.

Derived from the tool's name and whichever top-level arguments are complete so far, so
the card reads "Read src/app.py" as soon as ``file_path`` is complete, long before the
rest of the arguments (claude-agent-acp#867: generic titles until the input finished).
Whoever runs the tools describes them: toolwire's agent asks each tool
(``Tool.describe``, built from the helpers here) and its MCP servers' tools, through
``describe``'s ``extra``. A call nobody describes is read as a common agent's
(``COMMON_CALLS``: Claude Code's tool names, other agents' aliases folded onto them), so
``toolwire updates`` and the library title a stream without loading the tools. Unknown
tools show their name.

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


def text_arg(args: Mapping[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` whose value is a non-blank string, or None."""
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _int(args: Mapping[str, Any], key: str) -> int | None:
    value = args.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


PATH_KEYS: Final = ("file_path", "path", "filepath", "filename", "absolute_path")
"""The arguments a call names its file by, across agents."""


def plain_call(name: str, kind: ToolKind, args: Mapping[str, Any], cwd: str) -> Description:
    """A call with no words of its own: its name, and the file it names if any."""
    path = text_arg(args, *PATH_KEYS)
    locations = (location(resolve(path, cwd)[1]),) if path is not None else ()
    return Description(name, kind, locations)


def file_call(
    verb: str, kind: ToolKind, args: Mapping[str, Any], cwd: str, *, lines: bool = False
) -> Description:
    """ "Read src/app.py": the verb and the file (with the lines asked for, ``lines``)."""
    path = text_arg(args, *PATH_KEYS)
    if path is None:
        return Description(f"{verb} file", kind)
    shown, absolute = resolve(path, cwd)
    title = f"{verb} {shown}"
    line = _int(args, "offset") if lines else None
    limit = _int(args, "limit") if lines else None
    if line is not None and limit is not None:
        title += f" (lines {line}-{line + max(limit - 1, 0)})"
    elif line is not None:
        title += f" (from line {line})"
    return Description(title, kind, (location(absolute, line),))


def command_call(kind: ToolKind, args: Mapping[str, Any]) -> Description:
    """The command's first line."""
    command = text_arg(args, "command", "cmd")
    if command is None:
        return Description("Run command", kind)
    return Description(shorten(command) or "Run command", kind)


def pattern_call(verb: str, kind: ToolKind, args: Mapping[str, Any], cwd: str) -> Description:
    """'Search "pattern" in dir (glob)'."""
    pattern = text_arg(args, "pattern", "query", "regex")
    if pattern is None:
        return Description(verb, kind)
    title = f'{verb} "{shorten(pattern, TITLE_MAX // 2)}"'
    where = text_arg(args, "path")
    if where is not None:
        title += f" in {resolve(where, cwd)[0]}"
    glob = text_arg(args, "glob")
    if glob is not None:
        title += f" ({shorten(glob, 30)})"
    return Description(shorten(title), kind)


def todos_call(kind: ToolKind, args: Mapping[str, Any]) -> Description:
    """ "Update todos (3)": how many entries the list has."""
    todos = args.get("todos")
    if isinstance(todos, list):
        return Description(f"Update todos ({len(todos)})", kind)
    return Description("Update todos", kind)


def fetch_call(kind: ToolKind, args: Mapping[str, Any]) -> Description:
    """Host and path as soon as ``url`` is complete."""
    # What is fetched from where, without a query string that may be long (or carry a
    # token).
    url = text_arg(args, "url")
    if url is None:
        return Description("Fetch", kind)
    try:
        parts = urlsplit(url.strip())
        where = (parts.hostname or "") + (parts.path if parts.path != "/" else "")
    except ValueError:
        where = ""
    return Description(f"Fetch {shorten(where or url, 70)}", kind)


def web_search_call(kind: ToolKind, args: Mapping[str, Any]) -> Description:
    """The query as it streams in: the card says what is searched before results exist."""
    query = text_arg(args, "query")
    return Description(f"Search the web: {shorten(query, 70)}" if query else "Search the web", kind)


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


Describer = Callable[[Mapping[str, Any], str], Description]
"""Title, kind and locations from the arguments known so far and the session's cwd."""

#: How the calls of the common coding agents read when toolwire does not run them (the
#: ``toolwire updates`` command, the library): Claude Code's tools, which toolwire's own
#: are named after; other agents' names fold onto them (``TOOL_ALIASES``). toolwire's
#: agent asks its own tools (``Tool.describe``), which say the same.
COMMON_CALLS: Final[Mapping[str, Describer]] = {
    "Read": lambda args, cwd: file_call("Read", "read", args, cwd, lines=True),
    "Write": lambda args, cwd: file_call("Write", "edit", args, cwd),
    "Edit": lambda args, cwd: file_call("Edit", "edit", args, cwd),
    "Bash": lambda args, cwd: command_call("execute", args),
    "Grep": lambda args, cwd: pattern_call("Search", "search", args, cwd),
    "Glob": lambda args, cwd: pattern_call("Find", "search", args, cwd),
    "TodoWrite": lambda args, cwd: todos_call("think", args),
    "WebFetch": lambda args, cwd: fetch_call("fetch", args),
    "WebSearch": lambda args, cwd: web_search_call("search", args),
}


def describe(
    name: str, args: Mapping[str, Any], cwd: str, extra: Mapping[str, Describer] | None = None
) -> Description:
    """Title, kind and locations for tool ``name`` given the arguments known so far.

    ``extra`` describes the tools of the one who runs them (the agent's tools, its MCP
    servers' tools, ``Task``), by exact name; other names are read as a common agent's.
    """
    describer = extra.get(name) if extra else None
    if describer is None:
        describer = COMMON_CALLS.get(canonical_tool(name) or "")
    if describer is not None:
        return describer(args, cwd)
    return plain_call(name or "Tool", "other", args, cwd)


__all__ = [
    "COMMON_CALLS",
    "PATH_KEYS",
    "TITLE_MAX",
    "TOOL_ALIASES",
    "Describer",
    "Description",
    "canonical_tool",
    "command_call",
    "describe",
    "display_path",
    "fetch_call",
    "file_call",
    "pattern_call",
    "plain_call",
    "resolve",
    "shorten",
    "text_arg",
    "todos_call",
    "web_search_call",
]
