"""Tool items out of a history: each call paired with its result, in one pass.

A ``ToolItem`` is one call and what it returned (``result`` None when it never got a
result: an interrupted call). Its ``category`` picks the dedup rule and the section it is
rendered in, its ``key`` what it supersedes (``dedupe``). Tool names are matched without
case, and the names other agents use for the same tools (``read_file``, ``shell``...,
``updates.titles.TOOL_ALIASES``) count too, because imported transcripts carry them.
Paths are normalized against the session's working directory so ``src/a.py`` and
``/proj/src/a.py`` are one file.

Calls pair with results by id, within the assistant message they belong to: histories
repeat ids across turns (``call_0``), so a result answers the latest open call with its
id. Nothing here copies a result's text: items point at the strings in the history.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

from toolwire.handoff.commands import CommandClass, classify_command
from toolwire.history import Message, ToolCallPart, ToolResultPart
from toolwire.history.images import with_notes
from toolwire.history.pairing import pair
from toolwire.updates.titles import canonical_tool, display_path

Category: TypeAlias = Literal["read", "change", "command", "other"]

_CATEGORIES: dict[str | None, Category] = {
    "Read": "read",
    "Write": "change",
    "Edit": "change",
    "Bash": "command",
}
PATH_ARGS = ("file_path", "path", "filename", "notebook_path", "target_file")


@dataclass(frozen=True, slots=True)
class ToolItem:
    """One tool call with its result, as the handoff sees it."""

    seq: int
    """Position among the history's tool items (chronological, from 0)."""
    message_index: int
    """Index in the history of the message holding the call (of the result if orphan)."""
    call_id: str
    tool: str
    category: Category
    key: tuple[str, ...]
    """Dedup key: items with equal keys supersede one another (``dedupe``)."""
    label: str
    """The key for people: a path and range, a command, a tool and its arguments."""
    arguments: Any
    result: str | None
    """The result text; None when the call was interrupted before it returned."""
    is_error: bool = False
    path: str | None = None
    """Normalized absolute-or-as-given path, for reads and changes."""
    command: CommandClass | None = None
    orphan: bool = False
    """A result whose call is not in the history (e.g. the history was cut)."""
    read_only: bool = False
    """A tool the session knows only reads (an MCP tool with ``readOnlyHint``): its items
    dedupe like reads, latest per tool and arguments."""

    @property
    def interrupted(self) -> bool:
        return self.result is None

    @property
    def failed(self) -> bool:
        """An error result or no result: such an item never supersedes a success."""
        return self.is_error or self.result is None


def normalize_path(raw: str, cwd: str | None) -> str:
    """``raw`` made absolute against ``cwd`` (when relative and a cwd is known), normalized."""
    path = raw.strip()
    if cwd and not posixpath.isabs(path):
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path) if path else path


def category_of(tool: str) -> Category:
    """Which dedup rule and section a tool name (or an alias of it) belongs to."""
    return _CATEGORIES.get(canonical_tool(tool), "other")


def canonical_json(value: Any) -> str:
    """Arguments as JSON with sorted keys: independent of the order a model wrote them in."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class _Batch:
    """The calls of one assistant message and the results that came after it, paired
    when it closes by ``history.pairing.pair`` (the rule every request builder uses)."""

    def __init__(self, message: Message, index: int) -> None:
        self.calls = message.tool_calls()
        self.index = index
        self.results: list[tuple[ToolResultPart, int]] = []

    def answer(self, result: ToolResultPart, index: int) -> None:
        self.results.append((result, index))

    def close(self, items: list[ToolItem], cwd: str | None) -> None:
        """Append this batch's items: its calls in call order, then its orphan results."""
        answers, orphans = pair([c.id for c in self.calls], [r.call_id for r, _ in self.results])
        for call, answer in zip(self.calls, answers, strict=True):
            result = None if answer is None else self.results[answer][0]
            items.append(_item(len(items), call, self.index, result, cwd))
        for orphan in orphans:
            result, index = self.results[orphan]
            items.append(_item(len(items), None, index, result, cwd))


def extract_items(
    history: Sequence[Message],
    end: int | None = None,
    *,
    cwd: str | None = None,
    read_only: Collection[str] = (),
) -> list[ToolItem]:
    """Every tool item of ``history[:end]``, in call order (interrupted calls included).

    A call still unanswered when the next user or assistant message starts (or at
    ``end``) is interrupted; a result matching no open call is an orphan. ``read_only``
    names the session's own tools that only read (``ToolItem.read_only``).
    """
    stop = len(history) if end is None else end
    items: list[ToolItem] = []
    batch = _Batch(Message("assistant", ()), 0)
    for index in range(stop):
        message = history[index]
        if message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    batch.answer(part, index)
            continue
        batch.close(items, cwd)
        batch = _Batch(message if message.role == "assistant" else Message("user", ()), index)
    batch.close(items, cwd)
    if read_only:
        items = [replace(i, read_only=True) if i.tool in read_only else i for i in items]
    return items


def _item(
    seq: int,
    call: ToolCallPart | None,
    index: int,
    result: ToolResultPart | None,
    cwd: str | None,
) -> ToolItem:
    if call is None:
        assert result is not None  # an orphan: a result with no call
        name, arguments, call_id = result.name, {}, result.call_id
    else:
        name, arguments, call_id = call.name, call.arguments, call.id
    args = arguments if isinstance(arguments, Mapping) else {}
    category = category_of(name)
    path_arg = next((args[k] for k in PATH_ARGS if isinstance(args.get(k), str)), None)
    base: dict[str, Any] = {
        "seq": seq, "message_index": index, "call_id": call_id, "tool": name,
        "arguments": arguments, "result": None if result is None else _result_text(result),
        "is_error": result is not None and result.is_error, "orphan": call is None,
    }  # fmt: skip
    if category == "command":
        return _command_item(base, args, cwd)
    if category in ("read", "change") and path_arg is not None:
        return _file_item(base, category, normalize_path(path_arg, cwd), args, cwd)
    # Other tools, and a read or change with no path to key on: kept like any other tool.
    arg_text = canonical_json(arguments)
    return ToolItem(**base, category="other", key=("other", name, arg_text), label=arg_text)


def _result_text(result: ToolResultPart) -> str:
    # The block is text: an image the result carried is named, not sent.
    return with_notes(result.content, result.images, "not carried over")


def _file_item(
    base: dict[str, Any], category: Category, path: str, args: Mapping[str, Any], cwd: str | None
) -> ToolItem:
    shown = display_path(path, cwd)
    if category == "change":
        return ToolItem(**base, category=category, key=("change", path), label=shown, path=path)
    offset, limit = _line(args.get("offset"), start=True), _line(args.get("limit"), start=False)
    label = shown + (f" offset={offset}" if offset else "") + (f" limit={limit}" if limit else "")
    return ToolItem(
        **base, category=category, key=("read", path, offset, limit), label=label, path=path
    )


def _command_item(base: dict[str, Any], args: Mapping[str, Any], cwd: str | None) -> ToolItem:
    text = command_text(args.get("command", args.get("cmd")))
    verdict = classify_command(text)
    if args.get("run_in_background"):
        verdict = CommandClass("side-effecting", "runs in the background", verdict.normalized)
    where = args.get("cwd", args.get("workdir"))
    run_in = normalize_path(where, cwd) if isinstance(where, str) and where else (cwd or "")
    key = ("command", run_in, verdict.normalized)
    return ToolItem(**base, category="command", key=key, label=text.strip(), command=verdict)


def command_text(value: Any) -> str:
    """A command argument as a line: ``["bash", "-lc", "ls"]`` is ``ls``."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) == 3 and value[0] in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc"):
            return str(value[2])
        return shlex.join(value)
    return "" if value is None else canonical_json(value)


def _line(value: Any, *, start: bool) -> str:
    """A Read's offset or limit as key text; every spelling of "from the start" is ''."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        return "" if value is None else str(value)
    if start and value <= 1:
        return ""
    return str(value)


__all__ = [
    "Category",
    "ToolItem",
    "canonical_json",
    "category_of",
    "command_text",
    "extract_items",
    "normalize_path",
]
