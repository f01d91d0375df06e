"""``toolwire handoff``: what a user sees on the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.handoff.support import ANTHROPIC_MESSAGES, OPENAI_MESSAGES
from tests.proxy.support import anthropic_text_stream
from toolwire.cli import app
from toolwire.history import TextPart, ToolCallPart, ToolResultPart

runner = CliRunner()

BIG = "".join(f"{n:>6}\tline {n}\n" for n in range(1, 2001))
TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "user", "content": "Read the files."},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/a.py"}},
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/p/big.txt"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "OLD A"},
            {"type": "tool_result", "tool_use_id": "t2", "content": BIG},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t3", "name": "Read", "input": {"file_path": "/p/a.py"}},
            {"type": "tool_use", "id": "t4", "name": "Bash", "input": {"command": "rm -rf build"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t3", "content": "NEW A"},
            {"type": "tool_result", "tool_use_id": "t4", "content": ""},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Read both."}]},
    {"role": "user", "content": "Now the tests."},
    {"role": "assistant", "content": [{"type": "text", "text": "Running."}]},
]


LAST_TURN = "--- user ---\nNow the tests.\n\n--- assistant ---\nRunning.\n\n"
"""How the tail of ``TRANSCRIPT`` with ``--keep-last 1`` is printed after the block."""


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("TOOLWIRE_CONFIG", "TOOLWIRE_BACKEND", "TOOLWIRE_MODEL", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["handoff", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, data: Any, name: str = "t.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_prints_the_block(tmp_path: Path) -> None:
    code, out, err = run(write(tmp_path, TRANSCRIPT), "--keep-last", "1")
    assert code == 0, err
    assert out.startswith("[TOOLWIRE HANDOFF]\n")
    assert out.endswith("[/TOOLWIRE HANDOFF]\n\n" + LAST_TURN)
    assert "## Summary" in out
    assert "NEW A" in out
    assert "OLD A" not in out
    assert "### Read: /p/big.txt (truncated:" in out
    assert "### Bash: rm -rf build (side-effecting)" in out


def test_stdin_and_summarizer_none(tmp_path: Path) -> None:
    code, out, _ = run(
        "-", "--keep-last", "0", "--summarizer", "none", stdin=json.dumps(TRANSCRIPT)
    )
    assert code == 0
    assert "## Summary" not in out
    assert "## Files read" in out


def test_budget_option(tmp_path: Path) -> None:
    path = write(tmp_path, TRANSCRIPT)
    _, small, _ = run(path, "--budget", "300", "--summarizer", "none", "--keep-last", "1")
    _, large, _ = run(path, "--budget", "100000", "--summarizer", "none", "--keep-last", "1")
    assert len(small) < 700 < len(large)


def test_same_output_every_run(tmp_path: Path) -> None:
    path = write(tmp_path, TRANSCRIPT)
    assert run(path)[1] == run(path)[1]


def test_json_lists_every_item_and_its_fate(tmp_path: Path) -> None:
    code, out, _ = run(write(tmp_path, TRANSCRIPT), "--json", "--keep-last", "1")
    assert code == 0
    data = json.loads(out)
    assert data["format"] == "anthropic"
    assert data["summary"]["source"] == "extractive"
    rows = [(i["label"], i["status"], i["reason"]) for i in data["items"]]
    assert rows == [
        ("/p/a.py", "dropped", "superseded"),
        ("/p/big.txt", "truncated", None),
        ("/p/a.py", "kept", None),
        ("rm -rf build", "kept", None),
    ]
    assert data["items"][0]["key"] == ["read", "/p/a.py", "", ""]
    assert data["items"][3]["command"] == "side-effecting"
    assert data["items"][1]["omitted_chars"] > 0
    assert data["stats"]["files_read"] == 2
    assert data["stats"]["commands"] == 1
    assert data["block"].startswith("[TOOLWIRE HANDOFF]")
    assert [m["role"] for m in data["tail"]] == ["user", "assistant"]


def test_json_over_budget_reason(tmp_path: Path) -> None:
    _, out, _ = run(write(tmp_path, TRANSCRIPT), "--json", "--budget", "120", "--keep-last", "0")
    statuses = {(i["status"], i["reason"]) for i in json.loads(out)["items"]}
    assert ("dropped", "over_budget") in statuses


def test_openai_transcript(tmp_path: Path) -> None:
    code, out, _ = run(write(tmp_path, OPENAI_MESSAGES), "--keep-last", "1", "--json")
    assert code == 0
    assert json.loads(out)["format"] == "openai-chat"
    code, out, _ = run(
        write(tmp_path, {"system": "s", "messages": ANTHROPIC_MESSAGES}), "--keep-last", "1"
    )
    assert code == 0
    assert "1\t# Design" in out


def test_limits_from_config(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[handoff]\nmax_tool_result_chars = 300\nkeep_last = 1\n")
    code, out, _ = run(write(tmp_path, TRANSCRIPT), "--config", str(config), "--json")
    assert code == 0
    big = json.loads(out)["items"][1]
    assert big["status"] == "truncated"
    assert big["chars"] < 400
    assert [m["role"] for m in json.loads(out)["tail"]] == ["user", "assistant"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("not json", "not JSON"),
        ('{"hello": 1}', "unknown transcript shape"),
        ('[{"content": 1}]', "message 1 has no role"),
        (b"\xff\xfe", "is not UTF-8"),
    ],
)
def test_one_line_errors(tmp_path: Path, content: str | bytes | None, message: str) -> None:
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, out, err = run(str(path))
    assert code == 2
    assert out == ""
    assert err.startswith("toolwire: ")
    assert message in err
    assert err.count("\n") == 1


def test_unknown_summarizer_backend(tmp_path: Path) -> None:
    code, _, err = run(write(tmp_path, TRANSCRIPT), "--summarizer", "nope")
    assert code == 2
    assert "--summarizer: unknown backend 'nope'" in err


def _sse(text: str) -> str:
    return b"".join(anthropic_text_stream(text)).decode()


def test_summarizer_backend_from_config(tmp_path: Path) -> None:
    tape = tmp_path / "summary.jsonl"
    tape.write_text(json.dumps({"provider": "anthropic", "body": _sse("Task: read files.")}) + "\n")
    config = tmp_path / "c.toml"
    config.write_text('[backends.notes]\nprovider = "replay"\ncassette = "summary.jsonl"\n')
    path = write(tmp_path, TRANSCRIPT)
    code, out, err = run(path, "--config", str(config), "--summarizer", "notes", "--keep-last", "1")
    assert code == 0, err
    assert "## Summary\n\nTask: read files.\n\n## Files read" in out


def test_failing_summarizer_warns_and_falls_back(tmp_path: Path) -> None:
    tape = tmp_path / "empty.jsonl"
    tape.write_text(json.dumps({"provider": "anthropic", "body": _sse("")}) + "\n")
    config = tmp_path / "c.toml"
    config.write_text('[backends.notes]\nprovider = "replay"\ncassette = "empty.jsonl"\n')
    path = write(tmp_path, TRANSCRIPT)
    code, out, err = run(path, "--config", str(config), "--summarizer", "notes", "--keep-last", "1")
    assert code == 0
    assert "the summarizer 'notes' failed" in err
    assert "extractive summary was used" in err
    assert "Task (the user's first request):" in out


def test_a_short_transcript_prints_the_turns_the_new_backend_receives(tmp_path: Path) -> None:
    """No block (everything is in the last turns), but the new backend still gets them."""
    short = [TRANSCRIPT[0], TRANSCRIPT[1], TRANSCRIPT[2]]
    code, out, err = run(write(tmp_path, short))
    assert code == 0
    assert "[TOOLWIRE HANDOFF]" not in out
    assert out == (
        "--- user ---\nRead the files.\n\n"
        "--- assistant ---\n"
        '[call Read t1] {"file_path": "/p/a.py"}\n'
        '[call Read t2] {"file_path": "/p/big.txt"}\n\n'
        "--- tool ---\n"
        "[result of Read t1]\n```\nOLD A\n```\n"
        f"[result of Read t2]\n```\n{BIG}```\n\n"
    )
    assert "no handoff block" in err
    assert err.count("\n") == 1


def test_nothing_to_hand_over(tmp_path: Path) -> None:
    code, out, err = run(write(tmp_path, []))
    assert code == 0
    assert out == ""
    assert "nothing to hand over" in err


TEXT = st.text(st.sampled_from("ab `\n"), min_size=1, max_size=8)


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Anthropic transcripts: prompts, replies, calls with (or without) results."""
    out: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(1, 4))):
        out.append({"role": "user", "content": draw(TEXT)})
        blocks: list[dict[str, Any]] = [{"type": "text", "text": draw(TEXT)}]
        names = draw(st.lists(st.sampled_from(["Read", "Bash", "Grep"]), max_size=2))
        for n, name in enumerate(names):
            args = {"file_path": draw(TEXT)} if name == "Read" else {"command": draw(TEXT)}
            blocks.append({"type": "tool_use", "id": f"t{turn}_{n}", "name": name, "input": args})
        out.append({"role": "assistant", "content": blocks})
        answered = [b for b in blocks if b["type"] == "tool_use" and draw(st.booleans())]
        if answered:
            results = [
                {"type": "tool_result", "tool_use_id": b["id"], "content": draw(TEXT)}
                for b in answered
            ]
            out.append({"role": "user", "content": results})
    return out


@settings(max_examples=20, deadline=None)
@given(transcripts(), st.integers(0, 5), st.sampled_from(["none", "extractive"]))
def test_the_output_holds_everything_the_new_backend_receives(
    transcript: list[dict[str, Any]], keep_last: int, summarizer: str
) -> None:
    """Whatever the transcript's length: every piece of every message the new backend
    would get (``Handoff.context()``) is printed; nothing is printed when there is none."""
    from toolwire.handoff import build_handoff, import_transcript

    history = import_transcript(transcript).messages
    made = build_handoff(list(history), keep_last=keep_last, summary=summarizer == "extractive")
    result = runner.invoke(
        app,
        ["handoff", "-", "--keep-last", str(keep_last), "--summarizer", summarizer],
        input=json.dumps(transcript),
    )
    assert result.exit_code == 0
    out = result.stdout
    received = made.context()
    assert bool(out) == bool(received)
    for message in received:
        for part in message.parts:
            if isinstance(part, TextPart):
                assert part.text.strip() in out
            elif isinstance(part, ToolCallPart):
                assert f"[call {part.name} {part.id}] " in out
            elif isinstance(part, ToolResultPart):
                assert f"{part.content.rstrip()}" in out
