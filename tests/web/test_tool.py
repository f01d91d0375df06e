"""``WebFetch`` as the model sees it: the prompt on top, the cut, ``offset``, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.servers import page, serve
from toolwire.tools import Page, ToolContext, ToolLimits, get_tool
from toolwire.tools.webfetch import cut, host_of
from toolwire.web import Fetcher, WebSettings

pytestmark = pytest.mark.anyio


def _context(tmp_path: Path, budget: int) -> ToolContext:
    web = Fetcher(WebSettings(allow_hosts=("site.test",), resolve=(("site.test", "127.0.0.1"),)))
    return ToolContext.create(tmp_path, limits=ToolLimits(output_max_bytes=budget), web=web)


async def test_a_long_page_is_cut_head_and_tail_and_read_on_with_offset(tmp_path: Path) -> None:
    lines = "".join(f"line {n:05d}\n" for n in range(3000))  # 33,000 characters
    tool = get_tool("WebFetch")
    assert tool is not None
    async with serve({"/": page(lines.encode(), "text/plain")}) as server:
        ctx = _context(tmp_path, 4000)
        first = await tool.run({"url": server.url(), "prompt": "the last line"}, ctx)
        assert first.content.startswith("Looking for: the last line\nURL: ")
        assert len(first.content.encode()) <= 4000
        assert "line 00000" in first.content
        assert first.content.rstrip().endswith("line 02999")  # the tail is kept
        offset = int(first.content.split("offset=")[1].split(" ")[0])
        assert "line 00001" in lines[:offset]
        second = await tool.run({"url": server.url(), "offset": offset}, ctx)
        assert second.content.split("\n\n", 1)[1].startswith(lines[offset : offset + 20])
        assert server.hits == ["/"]  # the second read came from the cache


def test_cut_keeps_a_short_text_whole_and_never_splits_a_character() -> None:
    assert cut("short", 0, 100) == "short"
    shown = cut("é" * 1000, 0, 200)
    assert "\ufffd" not in shown
    assert len(shown.encode()) < 400


async def test_errors_reach_the_model_as_tool_errors(tmp_path: Path) -> None:
    tool = get_tool("WebFetch")
    assert tool is not None
    refused = await tool.run({"url": "http://192.168.0.1/admin"}, _context(tmp_path, 4000))
    assert refused.is_error
    assert "private" in refused.content
    bare = await tool.run({"url": "https://example.com/"}, ToolContext.create(tmp_path))
    assert bare.is_error


def test_permission_scope_is_the_host() -> None:
    assert host_of("https://Docs.Python.org./3/library/") == "docs.python.org"
    assert host_of("not a url") is None
    tool = get_tool("WebFetch")
    assert tool is not None
    assert tool.scope({"url": "http://a.example:8080/x"}) == "a.example"


def test_page_is_the_port_type() -> None:
    assert Page("u", "u", 200, "text/plain", "t", 1, truncated=False).text == "t"
