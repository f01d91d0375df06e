"""The hub against a server written with the ``mcp`` SDK: starts, calls, failures, stops."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.mcp.support import (
    alive,
    assert_gone,
    edge,
    free_port,
    groups,
    hub,
    live_members,
    run,
    until,
)
from toolwire.mcp import ServerSpec

pytestmark = pytest.mark.e2e


def test_a_server_that_never_answers_is_reported_in_one_line_and_the_rest_start(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        h = hub(str(tmp_path / "mcp.log"))
        failures = await h.start([edge("slowpoke", "never", timeout=1.0), edge("good")])
        pgids = groups(h)
        assert len(failures) == 1
        line = failures[0]
        assert "\n" not in line
        assert line.startswith("MCP server 'slowpoke' did not start: no answer within 1 s; check")
        assert str(tmp_path / "mcp.log") in line
        assert [t.model_name for t in h.tools()][:3] == [
            "mcp__good__ask_name",
            "mcp__good__big",
            "mcp__good__change",
        ]
        assert (await h.call("mcp__good__echo", {"text": "still here"})).text == "still here"
        await h.aclose()
        assert_gone(pgids)

    run(main())


def test_a_missing_command_names_what_to_check() -> None:
    async def main() -> None:
        h = hub()
        spec = edge()
        failures = await h.start([type(spec)(name="x", transport="stdio", command="/no/such/mcp")])
        assert failures == [
            "MCP server 'x' did not start: command '/no/such/mcp' not found; "
            "check the command's path and PATH"
        ]
        assert h.tools() == []
        await h.aclose()

    run(main())


def test_tools_carry_hints_and_trust_and_a_gemini_hostile_schema_lists_fine() -> None:
    async def main() -> None:
        h = hub()
        assert await h.start([edge(trusted=True, tools_deny=("sp*",))]) == []
        echo = h.tool("mcp__edge__echo")
        assert echo is not None
        assert (echo.read_only, echo.destructive, echo.trusted) == (True, False, True)
        assert echo.spec().name == "mcp__edge__echo"
        assert h.tool("mcp__edge__spawn") is None  # denied by pattern
        hostile = h.tool("mcp__edge__hostile")
        assert hostile is not None
        schema = hostile.input_schema
        assert "$defs" in schema
        assert schema["properties"]["when"]["format"] == "date-time"
        assert "anyOf" in schema["properties"]["window"]
        result = await h.call("mcp__edge__hostile", {"when": "2026-01-02T03:04:05"})
        assert not result.is_error
        assert result.text.startswith("2026-01-02T03:04:05")
        await h.aclose()

    run(main())


def test_a_tool_list_change_refreshes_the_tools_for_the_next_request() -> None:
    async def main() -> None:
        h = hub()
        await h.start([edge()])
        assert h.changed() is False
        assert h.tool("mcp__edge__added") is None
        await h.call("mcp__edge__change", {})
        assert await until(lambda: h.tool("mcp__edge__added") is not None)
        assert h.changed() is True
        assert h.changed() is False  # once
        assert (await h.call("mcp__edge__added", {})).text == "here"
        await h.aclose()

    run(main())


def test_progress_arrives_and_a_cancelled_call_reaches_the_server(tmp_path: Path) -> None:
    marks = tmp_path / "marks"

    async def main() -> None:
        h = hub()
        await h.start([edge(env={"EDGE_MARKS": str(marks)})])
        seen: list[tuple[float, float | None, str | None]] = []
        call = asyncio.create_task(
            h.call("mcp__edge__wait", {"seconds": 30}, on_progress=lambda *a: seen.append(a))
        )
        assert await until(lambda: len(seen) >= 2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await until(lambda: marks.is_file() and "cancelled" in marks.read_text())
        assert seen[0] == (0.0, 300.0, "waiting")
        # The connection survives the cancel.
        assert (await h.call("mcp__edge__echo", {"text": "after"})).text == "after"
        await h.aclose()

    run(main())


def test_a_server_that_dies_mid_call_is_restarted_once_then_reported(tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"

    async def main() -> None:
        h = hub(str(log))
        await h.start([edge()])
        first = groups(h)
        result = await h.call("mcp__edge__crash", {})
        assert result.is_error
        assert "was restarted" in result.text
        assert "call the tool again" in result.text
        assert groups(h) != first
        assert (await h.call("mcp__edge__echo", {"text": "back"})).text == "back"
        h.changed()
        second = groups(h)
        result = await h.call("mcp__edge__crash", {})
        assert result.is_error
        assert "not restarted again" in result.text
        assert str(log) in result.text
        assert h.tools() == []
        assert h.changed() is True
        gone = await h.call("mcp__edge__echo", {"text": "x"})
        assert gone.is_error
        assert "unknown MCP tool" in gone.text
        await h.aclose()
        assert_gone(first + second)

    run(main())
    # Both processes' stderr went to the log, none of it into the protocol.
    assert log.read_text().count("edge server") == 2


def test_close_stops_the_whole_process_group_and_is_idempotent() -> None:
    async def main() -> None:
        h = hub()
        await h.start([edge()])
        pgids = groups(h)
        child = int((await h.call("mcp__edge__spawn", {})).text)
        assert alive(child)
        assert child in live_members(pgids[0])
        await h.aclose()
        await h.aclose()
        assert_gone(pgids)
        assert not alive(child)

    run(main())


def test_a_huge_result_is_capped_head_and_tail() -> None:
    async def main() -> None:
        h = hub()
        await h.start([edge()])
        result = await h.call("mcp__edge__big", {"size": 200_000}, max_output_bytes=4000)
        assert result.text.startswith("HEAD\n")
        assert result.text.endswith("TAIL")
        assert "bytes not shown: output capped at 4,000 bytes" in result.text
        assert len(result.text.encode()) < 4200
        await h.aclose()

    run(main())


def test_same_name_twice_runs_once_and_an_unset_variable_is_reported() -> None:
    async def main() -> None:
        h = hub()
        failures = await h.start(
            [edge("dup"), edge("dup"), edge("envy", problem="env X names ${X}, which is not set")]
        )
        assert len(failures) == 2
        assert "already running" in failures[0]
        assert failures[1] == "MCP server 'envy' did not start: env X names ${X}, which is not set"
        assert len(groups(h)) == 1
        await h.aclose()

    run(main())


def test_a_server_that_exits_while_idle_is_back_before_the_next_call() -> None:
    async def main() -> None:
        h = hub()
        await h.start([edge()])
        first = groups(h)
        assert (await h.call("mcp__edge__exit_soon", {})).text == "bye"
        assert await until(lambda: groups(h) not in ([], first))
        assert (await h.call("mcp__edge__echo", {"text": "again"})).text == "again"
        await h.aclose()
        assert_gone(first)

    run(main())


def test_servers_start_in_parallel(tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"

    async def main() -> float:
        h = hub(str(log))
        started = time.monotonic()
        failures = await h.start([edge(f"never{i}", "never", timeout=1.5) for i in range(3)])
        took = time.monotonic() - started
        assert len(failures) == 3
        await h.aclose()
        return took

    assert run(main()) < 3.0  # three 1.5 s timeouts, side by side


def test_an_http_server_that_is_not_there_is_reported_in_one_line() -> None:
    async def main() -> None:
        h = hub()
        spec = ServerSpec(name="web", transport="http", url=f"http://127.0.0.1:{free_port()}/mcp")
        [line] = await h.start([spec])
        assert line.startswith("MCP server 'web' did not start: ")
        assert line.endswith(f"check that {spec.url} is reachable and serves MCP over http")
        assert "\n" not in line
        await h.aclose()

    run(main())
