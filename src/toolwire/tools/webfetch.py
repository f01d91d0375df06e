"""``WebFetch``: a web page as Markdown for the model, through the context's web port.

The port (``WebPort``, implemented by ``toolwire.web.Fetcher``) does the network: what
may be reached, the deadline, the byte cap, the decoding. Here: the arguments, the
``prompt`` put at the top ("Looking for: ..."; the model reads the page itself, there is
no second model call), and the cut: a page longer than ``ToolLimits.output_max_bytes``
shows its head and its tail around a line giving the ``offset`` to read on from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from toolwire.tools.args import optional_int, optional_str, required_str
from toolwire.tools.base import Tool, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.tools.errors import ToolError
from toolwire.tools.web_port import Page
from toolwire.updates.titles import Description, fetch_call

DESCRIPTION = """\
Fetches a web page (http or https) and returns its text: HTML as Markdown, other text,
JSON and XML as they are. Binary files (images, PDFs, archives) are refused.

- url: the full URL. Private and local network addresses are refused unless the user
  allowed them.
- prompt: optional, what you are looking for in the page; it is shown above the page.
- offset: optional, the character to start at, for a page longer than one result: the
  note in the result gives the offset to continue from.
- Pages are kept for 15 minutes: fetching the same URL again is instant."""

#: Share of the budget for the head of a long page; the rest shows its end.
HEAD_SHARE = 0.75
#: Room kept for the line that replaces the middle (its numbers included).
MARKER_BYTES = 160


class WebFetchTool(Tool):
    """The ``WebFetch`` tool."""

    name = "WebFetch"
    description = DESCRIPTION
    kind = "fetch"
    effect = "fetch"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri", "description": "The URL to fetch."},
            "prompt": {"type": "string", "description": "What to look for in the page."},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "The character of the page's text to start at.",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """The URL's host and path."""
        return fetch_call(self.kind, args)

    def scope(self, args: Mapping[str, Any]) -> str | None:
        """A permission holds for the URL's host."""
        return host_of(args.get("url"))

    async def vet(self, args: Mapping[str, Any], ctx: ToolContext) -> str | None:
        """A URL the port would refuse (a private address, a host outside the URL
        grammar) is refused before the user is asked to allow its host."""
        url = args.get("url")
        if ctx.web is None or not isinstance(url, str) or not url:
            return None  # the run says what is wrong
        try:
            await ctx.web.vet(url)
        except ToolError as exc:
            return str(exc)
        return None

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        url = required_str(args, "url", allow_empty=False)
        prompt = optional_str(args, "prompt")
        offset = optional_int(args, "offset", minimum=0) or 0
        if ctx.web is None:
            raise ToolError("WebFetch is not available in this session.")
        page = await ctx.web.fetch(url)
        if offset > page.length:
            raise ToolError(f"offset {offset:,} is past the end of the page ({page.length:,}).")
        return ToolResult(
            content=render(page, prompt, offset, ctx.limits.output_max_bytes),
            raw_output={
                "url": page.url,
                "status": page.status,
                "media_type": page.media_type,
                "bytes": page.bytes_read,
                "chars": page.length,
                "truncated": page.truncated,
            },
        )


def host_of(url: object) -> str | None:
    """The lower-case host of ``url``; None when there is none yet."""
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".") or None if host else None


def render(page: Page, prompt: str | None, offset: int, budget: int) -> str:
    """The model's view: what it looks for, where the page is from, then its text from
    ``offset``, cut to ``budget`` bytes (head and tail) with the offset to go on at."""
    lines = [f"Looking for: {prompt}"] if prompt else []
    lines.append(
        f"URL: {page.url}"
        + (f" (redirected from {page.requested})" if page.url != page.requested else "")
    )
    lines.append(f"Type: {page.media_type}, {page.length:,} characters")
    if page.truncated:
        lines.append(f"[Only the first {page.bytes_read:,} bytes of the body were read.]")
    if offset:
        lines.append(f"[From character {offset:,}.]")
    head = "\n".join(lines) + "\n\n"
    room = max(budget - len(head.encode()), 1024)
    return head + cut(page, offset, room)


def cut(page: Page, offset: int, budget: int) -> str:
    """The text from ``offset`` in at most about ``budget`` UTF-8 bytes: whole, or its
    head and its tail around a line naming the left-out characters and the offset to read
    them. Only windows of the text are made (a character is at least one byte, so
    ``budget`` characters hold any ``budget`` bytes)."""
    length = page.length
    view = page.window(offset, offset + budget + 1)
    if len(view) <= budget and len(view.encode()) <= budget:
        return view
    budget = max(budget - MARKER_BYTES, 0)  # the marker line is part of the budget
    head_end = offset + _chars_within(view, int(budget * HEAD_SHARE))
    tail_budget = budget - int(budget * HEAD_SHARE)
    tail_view = page.window(max(length - tail_budget, head_end), length)
    tail = _chars_within(tail_view[::-1], tail_budget)
    tail_start = max(length - tail, head_end)
    marker = (
        f"\n\n[... characters {head_end:,} to {tail_start:,} of {length:,} not shown: "
        f"call WebFetch with offset={head_end} to read on ...]\n\n"
    )
    return page.window(offset, head_end) + marker + page.window(tail_start, length)


def _chars_within(text: str, budget: int) -> int:
    """How many leading characters of ``text`` fit in ``budget`` UTF-8 bytes."""
    encoded = text.encode()[:budget]
    return len(encoded.decode("utf-8", "ignore"))


__all__ = ["WebFetchTool", "cut", "host_of", "render"]
