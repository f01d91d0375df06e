"""The hub against hostile tool lists: one it cannot parse, one tool it cannot send."""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest

from tests.mcp.support import SCHEMAS, hub, run
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
