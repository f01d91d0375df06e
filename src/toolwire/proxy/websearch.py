"""Anthropic's ``web_search`` server tool for backends that have none (docs/proxy.md,
"Web search").

Claude Code asks for a search with the ``web_search_20250305`` server tool. A backend
other than Anthropic is offered a function tool standing for it (``web_search`` with a
``query``); when the model calls it, the proxy runs the search (``searching.py``) and
answers with the blocks Anthropic would send: ``server_tool_use`` and
``web_search_tool_result``. This module holds the shapes both ways: the tool as the
request gives it, the result blocks, and the history Claude Code sends back, where each
search becomes a function call and its results text, so later turns keep them.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolwire.history import ToolSpec

NAME = "web_search"
TOOL_PREFIX = "web_search_"  # web_search_20250305, and the versions after it
# Claude Code sends max_uses (8); a request without one still gets a bound.
DEFAULT_MAX_USES = 5
# Our encrypted_content: the snippet, base64, after a marker that tells it from Anthropic's.
_CONTENT_MARK = "tw1."
ENABLE_HINT = (
    'a web_search tool was dropped: set [tools.web] search = "searxng" (with searxng_url), '
    '"brave" or "tavily" (with api_key_env) for the proxy to run searches itself'
)

FUNCTION = ToolSpec(
    name=NAME,
    description=(
        "Search the web. Returns result titles, URLs and snippets. Use it for current "
        "events and facts beyond your knowledge."
    ),
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "The search query."}},
        "required": ["query"],
    },
)

_log = logging.getLogger(__name__)
_hinted = False


class Result(Protocol):
    """One search hit as the search providers give it."""

    @property
    def title(self) -> str: ...

    @property
    def url(self) -> str: ...

    @property
    def snippet(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SearchTool:
    """The request's ``web_search`` server tool: how often and where it may search."""

    max_uses: int = DEFAULT_MAX_USES
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()


def is_search_tool(tool: Any) -> bool:
    """True for Anthropic's ``web_search_*`` server tool definition."""
    return isinstance(tool, Mapping) and str(tool.get("type", "")).startswith(TOOL_PREFIX)


def search_tool(body: Mapping[str, Any]) -> SearchTool | None:
    """The request's ``web_search`` server tool (None: it has none)."""
    for tool in body.get("tools") or []:
        if is_search_tool(tool):
            uses = tool.get("max_uses")
            valid = isinstance(uses, int) and not isinstance(uses, bool) and uses > 0
            return SearchTool(
                uses if valid else DEFAULT_MAX_USES,
                _strings(tool.get("allowed_domains")),
                _strings(tool.get("blocked_domains")),
            )
    return None


def hint_once() -> None:
    """Log, once per process, which setting would have kept a dropped search tool."""
    global _hinted
    if not _hinted:
        _hinted = True
        _log.warning(ENABLE_HINT)


def server_id() -> str:
    """A fresh ``server_tool_use`` id, in Anthropic's ``srvtoolu_`` form."""
    return f"srvtoolu_{uuid.uuid4().hex[:24]}"


def result_items(results: Sequence[Result]) -> list[dict[str, Any]]:
    """``web_search_result`` items; ``encrypted_content`` carries the snippet."""
    return [
        {
            "type": "web_search_result",
            "url": r.url,
            "title": r.title,
            "encrypted_content": _CONTENT_MARK + base64.b64encode(r.snippet.encode()).decode(),
            "page_age": None,
        }
        for r in results
    ]


def error_content(code: str) -> dict[str, Any]:
    """A ``web_search_tool_result_error`` (``unavailable``, ``max_uses_exceeded``...)."""
    return {"type": "web_search_tool_result_error", "error_code": code}


def result_text(content: Any) -> str:
    """A ``web_search_tool_result`` content as text for a model: numbered hits, or the error."""
    if isinstance(content, Mapping):
        return f"Web search error: {content.get('error_code', 'unavailable')}"
    if not isinstance(content, list) or not content:
        return "No results."
    lines = []
    for number, item in enumerate(content, 1):
        if not isinstance(item, Mapping):
            continue
        lines.append(f"{number}. {item.get('title', '')}\n   {item.get('url', '')}")
        snippet = _snippet(item.get("encrypted_content"))
        if snippet:
            lines.append(f"   {snippet}")
    return "\n".join(lines)


def unfold(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``messages`` with each answered ``web_search`` as a function call and its result.

    An assistant message ``[text, server_tool_use, web_search_tool_result, text]``
    becomes ``assistant [text, tool_use]``, ``user [tool_result]``, ``assistant [text]``:
    the shape every backend's tool loop has, so a model keeps the results it was given.
    """
    out: list[Mapping[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not _has_result(content):
            out.append(message)
            continue
        assert isinstance(content, list)
        out += _split(content)
    return out


def _split(blocks: list[Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    pending: list[Any] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "server_tool_use" and block.get("name") == NAME:
            call = {"type": "tool_use", "id": block.get("id"), "name": NAME}
            pending.append({**call, "input": block.get("input") or {}})
        elif kind == "web_search_tool_result":
            text = result_text(block.get("content"))
            result = {"type": "tool_result", "tool_use_id": block.get("tool_use_id")}
            out.append({"role": "assistant", "content": pending})
            out.append({"role": "user", "content": [{**result, "content": text}]})
            pending = []
        else:
            pending.append(block)
    if pending:
        out.append({"role": "assistant", "content": pending})
    return out


def _has_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") == "web_search_tool_result" for b in content
    )


def _snippet(content: Any) -> str:
    if not isinstance(content, str) or not content.startswith(_CONTENT_MARK):
        return ""  # Anthropic's own: opaque
    try:
        return base64.b64decode(content[len(_CONTENT_MARK) :], validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return ""


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def query_of(arguments: Any) -> str | None:
    """The ``query`` of a ``web_search`` call's arguments (None: missing or empty)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    query = arguments.get("query") if isinstance(arguments, Mapping) else None
    return query.strip() if isinstance(query, str) and query.strip() else None


__all__ = [
    "DEFAULT_MAX_USES",
    "ENABLE_HINT",
    "FUNCTION",
    "NAME",
    "Result",
    "SearchTool",
    "error_content",
    "hint_once",
    "is_search_tool",
    "query_of",
    "result_items",
    "result_text",
    "search_tool",
    "server_id",
    "unfold",
]
