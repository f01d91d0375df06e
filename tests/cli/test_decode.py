"""``toolwire decode``: what a user sees on the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.helpers import RECORDED, needs_shared, read_stream
from toolwire.cli import app

runner = CliRunner()


def _run(*args: str, stdin: bytes | None = None) -> tuple[int, list[dict[str, Any]], str]:
    result = runner.invoke(app, ["decode", *args], input=stdin)
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return result.exit_code, rows, result.stderr


def _without_offsets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "offset"} for r in rows]


def test_default_decodes_the_bundled_sample() -> None:
    code, rows, err = _run()
    assert code == 0
    assert "bundled sample" in err
    starts = [r for r in rows if r["type"] == "tool_call_start"]
    assert [s["name"] for s in starts] == ["Read", "Edit"]
    assert rows[-1]["type"] == "message_end"
    assert rows[-1]["stop_reason"] == "tool_use"


@pytest.mark.parametrize("size", ["1", "7", "100"])
def test_chunking_changes_only_offsets(size: str) -> None:
    _, whole, _ = _run()
    _, chunked, _ = _run("--chunk-size", size)
    assert _without_offsets(chunked) == _without_offsets(whole)
    offsets = [r["offset"] for r in chunked]
    assert offsets == sorted(offsets)


def test_offset_shows_when_the_tool_was_named() -> None:
    sample = Path(__file__).parents[2] / "src/toolwire/samples/anthropic_edit.sse"
    body = sample.read_bytes()
    _, rows, _ = _run("--chunk-size", "1")
    start = next(r for r in rows if r["type"] == "tool_call_start")
    # The start is emitted on the byte that completes the event naming the tool, long
    # before the arguments end.
    marker = body.index(b'"name":"Read"')
    event_end = body.index(b"\n\n", marker) + 2
    assert start["offset"] == event_end
    end = next(r for r in rows if r["type"] == "tool_call_end")
    assert end["offset"] > start["offset"]
    assert rows[-1]["offset"] == len(body)


def test_only_filters_types() -> None:
    code, rows, _ = _run("--only", "tool_call_start,tool_call_end")
    assert code == 0
    assert {r["type"] for r in rows} == {"tool_call_start", "tool_call_end"}
    assert len(rows) == 4


def test_only_rejects_unknown_types() -> None:
    code, rows, err = _run("--only", "tool_call_begin")
    assert code == 2
    assert rows == []
    assert "unknown event type tool_call_begin" in err
    assert len(err.strip().splitlines()) == 1


@needs_shared
def test_reads_standard_input_and_guesses_the_format() -> None:
    body = read_stream(RECORDED / "openai_chat_parallel_tool_calls.sse")
    code, rows, _ = _run("-", stdin=body)
    assert code == 0
    names = [r["name"] for r in rows if r["type"] == "tool_call_start"]
    assert names == ["GetWeatherArgs", "get_stock_price"]


def test_unknown_format_cannot_be_guessed(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("hello")
    code, _, err = _run(str(path))
    assert code == 2
    assert "pass --format" in err


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    code, rows, err = _run(str(tmp_path / "nope.sse"))
    assert code == 2
    assert rows == []
    assert err.strip().splitlines() == [
        f"toolwire: cannot read {tmp_path / 'nope.sse'}: No such file or directory; check the path"
    ]


def test_directory_is_refused(tmp_path: Path) -> None:
    code, _, err = _run(str(tmp_path))
    assert code == 2
    assert "is a directory" in err


@needs_shared
def test_malformed_stream_prints_what_it_decoded(tmp_path: Path) -> None:
    body = read_stream(RECORDED / "anthropic_tool_use.sse")
    cut = body[: body.index(b'is\\"}')]  # cut inside the tool's arguments
    path = tmp_path / "cut.sse"
    path.write_bytes(cut + b"\n\ndata: {not json}\n\n")
    code, rows, _ = _run("--format", "anthropic", str(path))
    assert code == 0  # the input was read
    types = [r["type"] for r in rows]
    assert "text_delta" in types
    assert "tool_call_start" in types
    end = next(r for r in rows if r["type"] == "tool_call_end")
    assert "error" in end
    assert "stream_error" in types
    assert rows[-1]["type"] in ("message_end", "stream_error")


def test_text_formats_take_the_models_text(tmp_path: Path) -> None:
    text = (
        'Let me look.\n<tool_call>\n{"name": "Read", "arguments": {"file_path": "a.py"}}\n'
        "</tool_call>\nDone."
    )
    path = tmp_path / "out.txt"
    path.write_text(text, encoding="utf-8")
    code, rows, _ = _run("--format", "hermes", "--chunk-size", "3", str(path))
    assert code == 0
    assert next(r["type"] for r in rows if r["type"].startswith("tool")) == "tool_call_start"
    end = next(r for r in rows if r["type"] == "tool_call_end")
    assert end["arguments"] == {"file_path": "a.py"}
    text_out = "".join(r["text"] for r in rows if r["type"] == "text_delta")
    assert text_out.replace("\n", "") == "Let me look.Done."
    assert rows[-1] == {"type": "message_end", "stop_reason": "tool_use", "offset": len(text)}


_INT = {"type": "object", "properties": {"limit": {"type": "integer"}}}
_QWEN_CALL = (
    b"<tool_call>\n<function=Read>\n<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>"
)


@pytest.mark.parametrize(
    ("tools", "limit"),
    [
        ([{"name": "Read", "parameters": {"properties": {"limit": {"type": "integer"}}}}], 5),
        ([{"type": "function", "function": {"name": "Read", "parameters": _INT}}], 5),
        ([{"name": "Read", "input_schema": _INT}], 5),
        ([{"name": "Read", "parameters": {"type": "object"}}], "5"),
    ],
)
def test_tools_file_declares_the_tools_of_a_text_format(
    tmp_path: Path, tools: Any, limit: Any
) -> None:
    # The declared schema types the value; an accepted alias names the format.
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools))
    code, rows, _ = _run("--format", "qwen3_coder", "--tools", str(path), "-", stdin=_QWEN_CALL)
    assert code == 0
    assert [r["arguments"] for r in rows if r["type"] == "tool_call_end"] == [{"limit": limit}]


def test_without_tools_every_text_value_is_a_string() -> None:
    code, rows, _ = _run("--format", "qwen3-coder", "-", stdin=_QWEN_CALL)
    assert code == 0
    assert [r["arguments"] for r in rows if r["type"] == "tool_call_end"] == [{"limit": "5"}]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "is not JSON"),
        ('{"name": "Read"}', "holds no list"),
        ('[{"parameters": {}}]', "item 1 of"),
        ('[{"name": "Read", "parameters": []}]', "parameters of 'Read'"),
    ],
)
def test_a_bad_tools_file_is_one_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(content)
    code, rows, err = _run("--format", "hermes", "--tools", str(path), "-", stdin=b"")
    assert code == 2
    assert rows == []
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_an_unknown_text_format_is_one_line(tmp_path: Path) -> None:
    code, _, err = _run("--format", "llama9_json", "-", stdin=b"")
    assert code == 2
    assert "unknown format 'llama9_json'" in err
    assert "hermes" in err
    assert len(err.strip().splitlines()) == 1


def test_tools_are_for_text_formats(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text("[]")
    code, _, err = _run("--format", "anthropic", "--tools", str(path), "-", stdin=b"")
    assert code == 2
    assert "use a text format" in err
