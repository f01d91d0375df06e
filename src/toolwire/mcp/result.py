"""``McpResult``: a ``tools/call`` result as the editor and the model each get it.

The editor gets ACP content blocks, which mirror MCP's (text, image, audio, resource
link, embedded resource), so each block is carried over with only the fields ACP
defines. The model gets text: text blocks and text resources verbatim, anything binary as
a short note (``[image: image/png, 12 KB]``), capped head + tail like a built-in tool's
output. ``structuredContent`` is the call's ``rawOutput``, capped the same way: over the
cap it becomes its JSON text, head + tail (the editor's card and the stored transcript
would otherwise hold it whole). Images are fitted by the agent (``agent.mcp_calls``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.updates.output import cap_text

_LINK_FIELDS = ("uri", "name", "title", "description", "mimeType", "size")


@dataclass(frozen=True)
class McpResult:
    """One call's outcome."""

    content: list[dict[str, Any]]
    """ACP ``ToolCallContent`` items: ``{"type": "content", "content": block}``."""
    text: str
    """What the model reads."""
    raw_output: Any | None = None
    """The server's ``structuredContent``."""
    is_error: bool = False


def size_note(kind: str, mime: str | None, data: str | None) -> str:
    """``[image: image/png, 12 KB]`` for base64 ``data``."""
    size = len(data or "") * 3 // 4
    shown = f"{size:,} bytes" if size < 1024 else f"{size / 1024:,.0f} KB"
    return f"[{kind}: {mime or 'unknown type'}, {shown}]"


def _block(block: Mapping[str, Any], limit: int) -> tuple[dict[str, Any] | None, str]:
    """One MCP content block as an ACP block (None: nothing ACP can show) and its text."""
    kind = block.get("type")
    if kind == "text":
        text = str(block.get("text", ""))
        return {"type": "text", "text": cap_text(text, limit)}, text
    if kind in ("image", "audio"):
        mime, data = block.get("mimeType"), block.get("data")
        acp = {"type": kind, "data": data or "", "mimeType": mime or ""}
        return acp, size_note(kind, mime, data)
    if kind == "resource_link":
        acp = {key: block[key] for key in _LINK_FIELDS if block.get(key) is not None}
        acp.setdefault("name", block.get("uri", ""))
        label = block.get("title") or block.get("name") or block.get("uri")
        return {"type": "resource_link", **acp}, f"[resource link: {label} <{block.get('uri')}>]"
    if kind == "resource":
        inner = dict(block.get("resource") or {})
        uri, mime = inner.get("uri", ""), inner.get("mimeType")
        keep = {k: inner[k] for k in ("uri", "mimeType", "text", "blob") if k in inner}
        if "text" in inner:
            text = str(inner["text"])
            keep["text"] = cap_text(text, limit)
            return {"type": "resource", "resource": keep}, f"[resource: {uri}]\n{text}"
        note = size_note(f"resource {uri}", mime, inner.get("blob"))
        return {"type": "resource", "resource": keep}, note
    return None, f"[{kind or 'unknown'} content not shown]"


def map_result(result: Mapping[str, Any], max_output_bytes: int = 30_000) -> McpResult:
    """A ``CallToolResult`` in its JSON form (camelCase keys) as ``McpResult``."""
    content: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in result.get("content") or ():
        acp, text = _block(block, max_output_bytes)
        if acp is not None:
            content.append({"type": "content", "content": acp})
        texts.append(text)
    structured = result.get("structuredContent")
    dumped = None if structured is None else json.dumps(structured, ensure_ascii=False)
    if not texts and dumped is not None:
        # Servers should mirror structured output as text; when one does not, the model
        # still needs to see it.
        texts.append(dumped)
    raw = structured
    if dumped is not None and len(dumped.encode("utf-8")) > max_output_bytes:
        raw = cap_text(dumped, max_output_bytes)  # the editor's card and the transcript
    return McpResult(
        content=content,
        text=cap_text("\n".join(texts), max_output_bytes),
        raw_output=raw,
        is_error=bool(result.get("isError")),
    )


def error_result(text: str) -> McpResult:
    """A call that did not reach the tool (unknown name, server gone): the model is told."""
    return McpResult(
        content=[{"type": "content", "content": {"type": "text", "text": text}}],
        text=text,
        is_error=True,
    )


__all__ = ["McpResult", "error_result", "map_result", "size_note"]
