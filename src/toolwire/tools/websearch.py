"""``WebSearch``: the web searched through the context's search port.

Offered only when the session has a search provider (``[tools.web] search``) and its
backend does not search itself (``BackendConfig.search_route``); the port
(``SearchPort``, implemented by ``toolwire.web.Searcher``) does the network. The model
reads the hits as numbered title, URL and snippet lines; the editor gets each as a
``resource_link`` it can open.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from toolwire.tools.args import required_str
from toolwire.tools.base import Tool, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.tools.errors import ToolError
from toolwire.tools.search_port import SearchResult
from toolwire.updates.titles import Description, web_search_call

DESCRIPTION = """\
Searches the web and returns the results: title, URL and a short snippet of each.

- query: what to search for (at least 2 characters).
- allowed_domains: optional, only results from these domains (and their subdomains).
- blocked_domains: optional, never results from these domains.
- Read a result's page with WebFetch when the snippet is not enough; cite the URLs you
  used in your answer."""

_DOMAINS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


class WebSearchTool(Tool):
    """The ``WebSearch`` tool."""

    name = "WebSearch"
    description = DESCRIPTION
    kind = "search"
    effect = "read"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 2, "description": "The search query."},
            "allowed_domains": {**_DOMAINS, "description": "Only results from these domains."},
            "blocked_domains": {**_DOMAINS, "description": "No results from these domains."},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """The query."""
        return web_search_call(self.kind, args)

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        query = required_str(args, "query").strip()
        if len(query) < 2:
            raise ToolError("Argument 'query' must be at least 2 characters.")
        allowed = _domains(args, "allowed_domains")
        blocked = _domains(args, "blocked_domains")
        if ctx.search is None:
            raise ToolError("WebSearch is not available in this session.")
        hits = await ctx.search.search(query, allowed, blocked)
        return ToolResult(
            content=render(query, hits),
            links=tuple(hits),
            raw_output={
                "query": query,
                "provider": ctx.search.provider,
                "results": [{"title": h.title, "url": h.url} for h in hits],
            },
        )


def render(query: str, hits: Sequence[SearchResult]) -> str:
    """The hits as the model reads them: numbered, one block each."""
    if not hits:
        return f'No results for "{query}".'
    blocks = [f'Results for "{query}":']
    for number, hit in enumerate(hits, 1):
        block = f"{number}. {hit.title}\n   {hit.url}"
        blocks.append(f"{block}\n   {hit.snippet}" if hit.snippet else block)
    return "\n\n".join(blocks)


def _domains(args: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = args.get(key)
    if value is None:
        return ()
    if isinstance(value, str):  # one domain sent bare instead of in a list
        value = [value]
    if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
        raise ToolError(f"Argument {key!r} must be a list of domain names.")
    return tuple(d for d in value if d.strip())


__all__ = ["WebSearchTool", "render"]
