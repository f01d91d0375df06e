"""The hub against hostile tool lists: one it cannot parse, one tool it cannot send."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest

from tests.mcp.support import SCHEMAS, hub, run
from toolwire.backends import _schema
from toolwire.mcp import ServerSpec

pytestmark = pytest.mark.e2e


def _spec(mode: str, **kw: Any) -> ServerSpec:
    return ServerSpec(
        name="s", transport="stdio", command=sys.executable, args=(str(SCHEMAS), mode), **kw
    )


def test_a_tool_list_the_client_cannot_parse_fails_the_start_at_once() -> None:
    async def main() -> float:
        h = hub()
        began = time.monotonic()
        failures = await h.start([_spec("deep", timeout=30.0)])
        took = time.monotonic() - began
        (line,) = failures
        assert "\n" not in line
        assert line.startswith(
            "MCP server 's' did not start: its tools/list answer could not be parsed: "
        )
        assert "recursion limit" in line
        assert h.tools() == []
        await h.aclose()
        return took

    took = run(main())
    assert took < 15  # not the 30 s start timeout


def test_a_tool_whose_schema_cannot_be_converted_is_dropped_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    # A converter that still fails on this schema (as every one did before loops were
    # cut): only that tool goes, named, and the server's other tool stays.
    monkeypatch.setattr(_schema, "_flatten", broken)

    async def main() -> None:
        h = hub()
        failures = await h.start([_spec("loop")])
        assert failures == [
            "MCP server 's': tool 'looped' is not offered: its input schema cannot be "
            "converted for the model (RecursionError: maximum recursion depth exceeded)"
        ]
        assert [t.model_name for t in h.tools()] == ["mcp__s__echo", "mcp__s__garbled"]
        assert (await h.call("mcp__s__echo", {"text": "hi"})).text == "hi"
        await h.aclose()

    run(main())


def test_a_call_whose_answer_cannot_be_parsed_fails_at_once_and_the_server_still_serves() -> None:
    async def main() -> float:
        h = hub()
        assert await h.start([_spec("loop")]) == []
        began = time.monotonic()
        result = await asyncio.wait_for(h.call("mcp__s__garbled", {}), 60)
        took = time.monotonic() - began
        assert result.is_error
        assert "answer could not be parsed" in result.text
        assert "recursion limit" in result.text
        assert (await h.call("mcp__s__echo", {"text": "hi"})).text == "hi"
        await h.aclose()
        return took

    assert run(main()) < 10
