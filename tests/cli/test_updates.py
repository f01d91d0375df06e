"""``toolwire updates`` on the recorded and hand-written fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.acp_check import replay, validating, validator
from tests.helpers import FIXTURES, RECORDED, RECORDED_NAMES, read_stream, shared
from toolwire.cli import app
from toolwire.decode import decoder_for
from toolwire.events import ToolCallEnd
from toolwire.testing.sdk import round_trip
from toolwire.updates.wire import Notification


@pytest.fixture(autouse=True, scope="module")
def _every_notification_is_checked() -> Iterator[None]:
    with validating():
        yield


PREFIXES = {
    "anthropic_": "anthropic",
    "openai_chat_": "openai-chat",
    "openai_responses_": "openai-responses",
    "gemini_": "gemini",
    "vertex_": "gemini",
}
SKIP = {"openai_responses_function_call.jsonl"}  # payloads without SSE framing


def _fixtures() -> list[tuple[Path, str]]:
    out = []
    recorded = [RECORDED / name for name in RECORDED_NAMES]
    for path in sorted([*FIXTURES.glob("*.*"), *recorded], key=lambda p: p.name):
        fmt = next((f for p, f in PREFIXES.items() if path.name.startswith(p)), None)
        if fmt is not None and path.name not in SKIP:
            out.append((path, fmt))
    return out


def _run(*args: str) -> tuple[list[Notification], str]:
    result = CliRunner().invoke(app, ["updates", *args])
    assert result.exit_code == 0, result.output
    notes = []
    for raw in result.stdout_bytes.splitlines(keepends=True):
        message = json.loads(raw)
        update = message["params"]["update"]
        notes.append(
            Notification(
                message["params"]["sessionId"],
                update,
                raw,
                update["sessionUpdate"],
                update.get("toolCallId"),
            )
        )
    return notes, result.stderr


def _ends(path: Path, fmt: str) -> dict[str, ToolCallEnd]:
    decoder = decoder_for(fmt)
    events = decoder.feed(read_stream(path)) + decoder.close()
    return {e.id: e for e in events if isinstance(e, ToolCallEnd)}


@pytest.mark.parametrize(("path", "fmt"), _fixtures(), ids=lambda v: getattr(v, "name", v))
def test_fixture_notifications_are_valid_and_end_as_the_arguments_did(path: Path, fmt: str) -> None:
    notes, _ = _run("--format", fmt, "--cwd", "/proj", str(shared(path)))
    for note in notes:
        assert note.line.endswith(b"\n")
        assert note.line.count(b"\n") == 1
        assert not list(validator().iter_errors(note.message["params"]))
        assert note.message["params"]["sessionId"] == "sess_toolwire"
        round_trip(note)  # the official SDK models read it back unchanged
    calls = replay(notes)
    ends = _ends(path, fmt)
    assert set(calls) == set(ends)
    for call_id, end in ends.items():
        call = calls[call_id]
        if end.ok:
            # A server-run call (docs/decoding.md) was answered by the provider: completed.
            ran = "completed" if end.result is not None else "pending"
            assert call.get("status", "pending") == ran, "no tool is executed"
            expected: Any = {} if end.arguments in (None, "") else end.arguments
            assert call["rawInput"] == expected
        else:
            assert call["status"] == "failed"
            assert call["rawOutput"]["error"] == end.error


@pytest.mark.parametrize(("path", "fmt"), _fixtures()[:12], ids=lambda v: getattr(v, "name", v))
def test_chunking_and_time_change_the_frames_not_the_result(path: Path, fmt: str) -> None:
    whole, _ = _run("--format", fmt, "--cwd", "/proj", str(shared(path)))
    slow, _ = _run(
        "--format", fmt, "--cwd", "/proj", "--chunk-size", "7", "--chunk-ms", "30", str(path)
    )
    assert replay(slow) == replay(whole)
    text = [n.update["content"]["text"] for n in whole if n.kind == "agent_message_chunk"]
    assert "".join(text) == "".join(
        n.update["content"]["text"] for n in slow if n.kind == "agent_message_chunk"
    )


def test_slow_arrival_shows_the_title_before_the_arguments_end() -> None:
    notes, _ = _run("--chunk-size", "40", "--chunk-ms", "100", "--cwd", "/proj")
    read = [n.update for n in notes if n.tool_call_id == "toolu_01ReadConfigLoader0001"]
    assert read[0]["title"] == "Read file"
    assert read[1]["title"] == "Read src/app/config.py"
    assert "rawInput" not in read[1]
    assert read[1]["locations"] == [{"path": "/proj/src/app/config.py"}]
    assert read[2] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_01ReadConfigLoader0001",
        "rawInput": {"file_path": "src/app/config.py"},
    }


@pytest.mark.parametrize("profile", ["minimal", "verbose", "full"])
def test_profiles_and_session_id(profile: str) -> None:
    notes, stderr = _run("--profile", profile, "--session-id", "abc", "--cwd", "/proj")
    assert "bundled sample" in stderr
    assert {n.message["params"]["sessionId"] for n in notes} == {"abc"}
    updates = [n.update for n in notes if n.kind == "tool_call_update"]
    assert updates
    if profile != "minimal":
        assert all("title" in u and "kind" in u for u in updates)
    if profile == "full":
        assert all("content" in u and "status" in u for u in updates)


def test_stats_go_to_stderr() -> None:
    notes, stderr = _run("--stats", "--cwd", "/proj")
    assert "session total" in stderr
    total = stderr.strip().splitlines()[-1].split()
    assert int(total[2]) == len(notes)
    assert int(total[3]) == sum(len(n.line) for n in notes)


def test_bad_options_fail_with_one_line() -> None:
    result = CliRunner().invoke(app, ["updates", "--profile", "chatty"])
    assert result.exit_code == 2
    assert "unknown profile 'chatty'" in result.stderr
