"""The JSON-lines recorder: whole lines, flushed, secrets never written."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_check import validating
from toolwire.testing.record import REDACTED, TrafficRecorder, is_secret_key, read_recording, redact
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.wire import ToolCallState


@pytest.fixture(autouse=True, scope="module")
def _every_notification_is_checked() -> Iterator[None]:
    with validating():
        yield


class _Sink(io.BytesIO):
    """Counts writes and flushes, to check each line is one write then a flush."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def write(self, data: Any, /) -> int:  # any buffer, as BytesIO.write takes
        self.calls.append("write")
        return super().write(data)

    def flush(self) -> None:
        self.calls.append("flush")


def test_each_message_is_one_whole_line_written_then_flushed() -> None:
    sink = _Sink()
    recorder = TrafficRecorder(sink, clock=lambda: 12.5)
    engine = UpdateEngine("sess_r", clock=lambda: 0.0)
    (note,) = engine.start(ToolCallState("c1", "Read a.py", "read"))
    recorder.record("out", note)
    recorder.record("in", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert sink.calls == ["write", "flush", "write", "flush"]
    lines = sink.getvalue().splitlines(keepends=True)
    assert len(lines) == 2
    assert all(line.endswith(b"\n") for line in lines)
    first = json.loads(lines[0])
    assert first == {"t": 12.5, "dir": "out", "msg": note.message}
    assert json.loads(lines[1])["dir"] == "in"


def test_secrets_are_never_written() -> None:
    sink = _Sink()
    recorder = TrafficRecorder(sink)
    engine = UpdateEngine("sess_r", clock=lambda: 0.0)
    secret = "sk-ant-api03-AbCdEf0123456789xyz"
    state = ToolCallState(
        "c1",
        "curl",
        "execute",
        raw_input={
            "command": f'curl -H "Authorization: Bearer abcdefgh12345678" -H "x-api-key: {secret}"'
        },
    )
    recorder.record("out", engine.start(state)[0])
    recorder.record(
        "in",
        {
            "method": "authenticate",
            "params": {"api_key": secret, "headers": {"Authorization": "Bearer zzzzzzzzzzzz"}},
            "usage": {"input_tokens": 12, "max_tokens": 100},
        },
    )
    text = sink.getvalue().decode()
    assert secret not in text
    assert "abcdefgh12345678" not in text
    assert "zzzzzzzzzzzz" not in text
    assert REDACTED in text
    assert '"input_tokens":12' in text, "token counts are not secrets"


def test_redact_keys_and_values() -> None:
    for key in ("x-api-key", "OPENAI_API_KEY", "Token", "authorization"):
        assert is_secret_key(key)
    for key in ("max_tokens", "input_tokens", "path"):
        assert not is_secret_key(key)
    value: dict[str, Any] = {
        "env": {"ANTHROPIC_API_KEY": "abc"},
        "list": ["key sk-proj-12345678abcdefgh"],
    }
    assert redact(value) == {"env": {"ANTHROPIC_API_KEY": REDACTED}, "list": [f"key {REDACTED}"]}
    assert value["env"]["ANTHROPIC_API_KEY"] == "abc", "the input is not modified"


def test_read_recording_skips_a_cut_last_line(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = TrafficRecorder.open(path)
    recorder.record("in", {"method": "session/cancel"})
    recorder.close()
    with path.open("ab") as f:
        f.write(b'{"t":1,"dir":"out","msg":{"jsonrpc"')  # a crash mid-write
    assert [r["msg"] for r in read_recording(path)] == [{"method": "session/cancel"}]
