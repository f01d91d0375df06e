"""Bash and the local terminal: streaming, exit codes, timeouts, cancellation, capping."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.tools.support import make_project, process_gone, run, wait_gone
from toolwire.tools import CommandOutcome, LocalTerminal, ToolContext, ToolLimits, get_tool


def test_output_streams_in_order_and_the_result_has_all_of_it(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    chunks: list[str] = []
    command = "for i in 1 2 3 4 5; do echo line $i; echo err $i >&2; sleep 0.02; done"
    result = run("Bash", {"command": command}, ctx.with_output(chunks.append))
    expected = "".join(f"line {i}\nerr {i}\n" for i in range(1, 6))
    assert "".join(chunks) == expected
    assert len(chunks) >= 2  # it arrived while running, not in one piece at the end
    assert result.content == expected.rstrip("\n")
    assert not result.is_error
    assert result.raw_output is not None
    assert result.raw_output["exit_code"] == 0


def test_runs_in_cwd_and_reports_a_nonzero_exit_code(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    result = run("Bash", {"command": "pwd; exit 3", "description": "fail"}, ctx)
    assert result.is_error
    assert result.content == f"{ctx.cwd}\n\n[Exit code 3]"
    assert result.raw_output is not None
    assert result.raw_output["exit_code"] == 3


def test_no_output_and_signal_death_are_described(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    assert run("Bash", {"command": "true"}, ctx).content == "(no output)"
    result = run("Bash", {"command": "kill -TERM $$"}, ctx)
    assert result.is_error
    assert "Killed by signal 15" in result.content


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    started = time.monotonic()
    result = run("Bash", {"command": "sleep 30 & echo child $!; wait", "timeout": 300}, ctx)
    assert time.monotonic() - started < 5
    assert result.is_error
    assert "did not finish within 0.3 s" in result.content
    assert result.raw_output is not None
    assert result.raw_output["timed_out"] is True
    child = int(result.content.split("child ", 1)[1].split()[0])
    assert asyncio.run(wait_gone(child))


def test_timeout_is_clamped_to_the_maximum(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    ctx = ToolContext.create(ctx.cwd, limits=ToolLimits(bash_max_timeout_s=0.2))
    result = run("Bash", {"command": "sleep 10", "timeout": 600000}, ctx)
    assert result.raw_output is not None
    assert result.raw_output["timeout_s"] == 0.2
    assert result.raw_output["timed_out"] is True


def test_cancel_kills_the_command_and_its_children_promptly(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    tool = get_tool("Bash")
    assert tool is not None
    pids: list[int] = []

    async def scenario() -> float:
        seen = asyncio.Event()

        def on_output(chunk: str) -> None:
            pids.extend(int(word) for word in chunk.split() if word.isdigit())
            if len(pids) >= 2:
                seen.set()

        command = "sleep 60 & echo $! $$; wait"
        task = asyncio.create_task(tool.run({"command": command}, ctx.with_output(on_output)))
        await asyncio.wait_for(seen.wait(), 5)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        elapsed = time.monotonic() - started
        assert all([await wait_gone(pid) for pid in pids])
        return elapsed

    assert asyncio.run(scenario()) < 2
    assert pids
    assert all(process_gone(pid) for pid in pids)


def test_a_leftover_child_holding_the_pipe_does_not_hang_the_call(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    started = time.monotonic()
    result = run("Bash", {"command": "sleep 30 & echo started"}, ctx)
    assert time.monotonic() - started < 5
    assert result.content == "started"
    assert not result.is_error


def test_large_output_is_capped_head_and_tail_with_a_note(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    ctx = ToolContext.create(ctx.cwd, limits=ToolLimits(output_max_bytes=1000))
    streamed: list[str] = []
    result = run("Bash", {"command": "seq 1 20000"}, ctx.with_output(streamed.append))
    assert len("".join(streamed)) == sum(len(f"{i}\n") for i in range(1, 20001))
    assert result.content.startswith("1\n2\n3\n")
    assert result.content.endswith("19999\n20000")
    assert "bytes not shown: output capped at 1,000 bytes" in result.content
    assert len(result.content) < 1100
    assert result.raw_output is not None
    assert result.raw_output["truncated"] is True


def test_utf8_split_across_reads_is_decoded_whole(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    result = run("Bash", {"command": "printf '\\xc3'; sleep 0.05; printf '\\xa9\\n'"}, ctx)
    assert result.content == "é"


def test_a_failing_output_callback_does_not_wedge_the_command(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    calls: list[str] = []

    def broken(chunk: str) -> None:
        calls.append(chunk)
        raise RuntimeError("renderer bug")

    with pytest.raises(RuntimeError, match="renderer bug"):
        run("Bash", {"command": "seq 1 100000 | head -c 500000"}, ctx.with_output(broken))
    assert len(calls) == 1


def test_background_command_starts_and_is_killed_on_close(tmp_path: Path) -> None:
    terminal = LocalTerminal()
    ctx = ToolContext.create(make_project(tmp_path).cwd, terminal=terminal)
    tool = get_tool("Bash")
    assert tool is not None

    async def scenario() -> None:
        args = {"command": "echo ready; sleep 60", "run_in_background": True}
        result = await tool.run(args, ctx)
        assert not result.is_error
        assert result.raw_output is not None
        pid, log = result.raw_output["pid"], Path(result.raw_output["log_path"])
        for _ in range(100):
            if log.read_text() == "ready\n":
                break
            await asyncio.sleep(0.02)
        assert log.read_text() == "ready\n"
        assert not process_gone(pid)
        await terminal.aclose()
        assert await wait_gone(pid)
        log.unlink()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "Missing required argument 'command'"),
        ({"command": ""}, "must not be empty"),
        ({"command": "true", "timeout": "soon"}, "must be a number"),
        ({"command": "true", "timeout": 0}, "at least 1"),
        ({"command": "true", "run_in_background": "maybe"}, "true or false"),
    ],
)
def test_bad_arguments(tmp_path: Path, args: dict[str, object], message: str) -> None:
    result = run("Bash", args, make_project(tmp_path))
    assert result.is_error
    assert message in result.content


def test_the_agent_reads_how_a_command_ended_from_typed_fields(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    failed = run("Bash", {"command": "printf abc; exit 3"}, ctx)
    assert failed.command == CommandOutcome(
        exit_code=3, timed_out=False, timeout_s=120.0, output_chars=3, truncated=False
    )
    assert failed.terminal_id is None
    slow = run("Bash", {"command": "sleep 5", "timeout": 100}, ctx)
    assert slow.command is not None
    assert (slow.command.timed_out, slow.command.timeout_s) == (True, 0.1)
    (tmp_path / "project" / "a.txt").write_text("a\n", encoding="utf-8")
    assert run("Read", {"file_path": "a.txt"}, ctx).command is None  # not a command
