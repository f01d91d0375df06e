"""The hub against hostile tool lists: one it cannot parse, one tool it cannot send."""

from __future__ import annotations

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
        assert [t.model_name for t in h.tools()] == ["mcp__s__echo"]
        assert (await h.call("mcp__s__echo", {"text": "hi"})).text == "hi"
        await h.aclose()

    run(main())
