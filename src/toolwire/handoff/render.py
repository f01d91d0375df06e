"""The handoff block as text: delimited, sectioned, byte-for-byte reproducible.

Layout (sections without items are left out; ``--summarizer none`` leaves out Summary)::

    [TOOLWIRE HANDOFF]
    <preamble: what follows and how far to trust it>

    ## Summary
    ...
    ## Files read            (then: Files changed, Commands run, Other tools)

    ### Read: src/app.py offset=10 (stale: changed later by Edit)
    ```
    <verbatim result, cut in the middle where marked>
    ```

    [/TOOLWIRE HANDOFF]

Every item names its tool and key and says whether it failed, was interrupted, is stale
or was truncated. Contents are fenced with more backticks than they contain, so a file
full of Markdown cannot close its fence early. Nothing here reads a clock, a set's order
or a dict's insertion order that came from outside: the same input gives the same bytes
(prompt caching and Anthropic's thinking-block binding depend on it: docs/design.md,
"Backend switch: the handoff").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from toolwire.handoff.dedupe import Verdict
from toolwire.handoff.extract import Category, ToolItem, canonical_json
from toolwire.history import ImagePart, Message, Part, TextPart, ToolCallPart, ToolResultPart
from toolwire.updates.titles import canonical_tool

OPEN = "[TOOLWIRE HANDOFF]"
CLOSE = "[/TOOLWIRE HANDOFF]"
PREAMBLE = (
    "Earlier turns of this session ran on another model and are not repeated here. The\n"
    "summary retells them; the tool sections are verbatim copies of what the tools returned\n"
    "(only the latest result per file and per read-only command, cut in the middle where\n"
    "marked). Read a file again before quoting or editing anything marked stale or cut."
)
SECTIONS: tuple[tuple[Category, str], ...] = (
    ("read", "Files read"),
    ("change", "Files changed"),
    ("command", "Commands run"),
    ("other", "Other tools"),
)
SECTION_HEADINGS: Mapping[Category, str] = {cat: f"## {title}\n\n" for cat, title in SECTIONS}
INTERRUPTED = "(interrupted: the call never returned a result)"
MAX_LABEL = 200
_TICKS = re.compile(r"`{3,}")


def body_parts(item: ToolItem) -> list[str]:
    """The verbatim content of an item as pieces, so a cap can cut without joining first."""
    result = INTERRUPTED if item.result is None else item.result
    args = item.arguments if isinstance(item.arguments, Mapping) else {}
    if item.category == "read":
        return [result]
    if item.category == "command":
        command = item.command.normalized if item.command is not None else item.label
        return [f"$ {_command_line(args, command)}\n", result]
    if item.category == "change":
        return _change_parts(item, args, result)
    if len(item.label) > MAX_LABEL:  # the header shows only the start of the arguments
        return [f"arguments: {item.label}\n", result]
    return [result]


def _command_line(args: Mapping[str, object], fallback: str) -> str:
    value = args.get("command", args.get("cmd"))
    return value if isinstance(value, str) else fallback


def _change_parts(item: ToolItem, args: Mapping[str, object], result: str) -> list[str]:
    head = f"{result}\n"
    if canonical_tool(item.tool) == "Write" and isinstance(args.get("content"), str):
        return [head, "content:\n", str(args["content"])]
    if isinstance(args.get("old_string"), str) and isinstance(args.get("new_string"), str):
        every = "replace_all: true\n" if args.get("replace_all") is True else ""
        return [head, every, "old_string:\n", str(args["old_string"]),
                "\nnew_string:\n", str(args["new_string"])]  # fmt: skip
    rest = {k: v for k, v in args.items() if k not in ("file_path", "path", "notebook_path")}
    return [head, f"arguments: {canonical_json(rest)}"]


def item_header(item: ToolItem, verdict: Verdict, omitted: int) -> str:
    """``### Tool: key (flags)`` on one line."""
    label = item.label.replace("\r", "").replace("\n", " \\n ")
    if len(label) > MAX_LABEL:
        label = label[: MAX_LABEL - 3] + "..."
    flags: list[str] = []
    if item.command is not None:
        flags.append(item.command.kind)
    if item.orphan:
        flags.append("result without its call")
    if item.interrupted:
        flags.append("interrupted")
    elif item.is_error:
        flags.append("error")
    if verdict.stale_by is not None:
        flags.append(f"stale: changed later by {verdict.stale_by}")
    if omitted:
        flags.append(f"truncated: {omitted} chars omitted")
    suffix = "".join(f" ({flag})" for flag in flags)
    return f"### {item.tool}: {label}{suffix}\n"


def fence_for(body: str) -> str:
    """A backtick fence longer than any run of backticks in ``body``."""
    longest = max((len(m) for m in _TICKS.findall(body)), default=2)
    return "`" * (longest + 1)


def format_item(item: ToolItem, verdict: Verdict, body: str, omitted: int) -> str:
    """One item as it appears in the block (ends with a blank line)."""
    fence = fence_for(body)
    newline = "" if body.endswith("\n") else "\n"
    return f"{item_header(item, verdict, omitted)}{fence}\n{body}{newline}{fence}\n\n"


def render_tool_context(entries: Sequence[tuple[ToolItem, str]]) -> str:
    """The tool sections: fixed section order, items in call order within each."""
    by_section: dict[Category, list[tuple[int, str]]] = {cat: [] for cat, _ in SECTIONS}
    for item, text in entries:
        by_section[item.category].append((item.seq, text))
    out: list[str] = []
    for category, _ in SECTIONS:
        texts = sorted(by_section[category])
        if texts:
            out.append(SECTION_HEADINGS[category])
            out.extend(text for _, text in texts)
    return "".join(out)


def render_block(summary: str | None, tool_context: str, preamble: str = PREAMBLE) -> str:
    """The whole block, or '' when there is nothing to carry over."""
    if not tool_context and not (summary and summary.strip()):
        return ""
    parts = [OPEN, "\n", preamble, "\n\n"]
    if summary is not None and summary.strip():
        parts += ["## Summary\n\n", summary.strip(), "\n\n"]
    parts += [tool_context, CLOSE, "\n\n"]
    return "".join(parts)


def render_messages(messages: Sequence[Message]) -> str:
    """Messages as a person reads them (``toolwire handoff``'s view of the tail).

    Every message under a ``--- role ---`` line; text as it is; a call as its name, id
    and arguments (sorted keys); a result fenced like a block item. Nothing is cut: this
    is what the new backend receives.
    """
    out: list[str] = []
    for message in messages:
        out.append(f"--- {message.role} ---\n")
        for part in message.parts:
            out.append(_part_text(part))
        out.append("\n")
    return "".join(out)


def _part_text(part: Part) -> str:
    if isinstance(part, ImagePart):
        return part.note() + "\n"
    if isinstance(part, ToolCallPart):
        return f"[call {part.name} {part.id}] {canonical_json(part.arguments)}\n"
    if isinstance(part, ToolResultPart):
        error = " (error)" if part.is_error else ""
        fence = fence_for(part.content)
        newline = "" if part.content.endswith("\n") else "\n"
        head = f"[result of {part.name} {part.call_id}{error}]\n"
        notes = "".join(i.note() + "\n" for i in part.images)
        return f"{head}{fence}\n{part.content}{newline}{fence}\n{notes}"
    text = part.text if isinstance(part, TextPart) else f"[thinking] {part.text}"
    return text if text.endswith("\n") else f"{text}\n"


__all__ = [
    "CLOSE",
    "INTERRUPTED",
    "OPEN",
    "PREAMBLE",
    "SECTIONS",
    "SECTION_HEADINGS",
    "body_parts",
    "fence_for",
    "format_item",
    "item_header",
    "render_block",
    "render_messages",
    "render_tool_context",
]
