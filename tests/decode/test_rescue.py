"""Rescue: calls a server leaked into the text or the reasoning become real calls, and
nothing else does (``toolwire.decode.rescue``, docs/decoding.md "Rescue")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.helpers import check_invariants, split_at
from toolwire.decode.rescue import CANDIDATES, Rescue
from toolwire.events import (
    Event,
    MessageEnd,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

TOOLS: dict[str, Any] = {
    "Read": {"type": "object", "properties": {"file_path": {"type": "string"}}},
    "Edit": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
        },
    },
    "Bash": {"type": "object", "properties": {"command": {"type": "string"}}},
}

# Ollama's qwen3-coder: the opening <tool_call> is missing, the closing one is not.
QWEN_NO_OPEN = (
    "I'll read the file first.\n"
    "<function=Read>\n<parameter=file_path>\nsrc/app.py\n</parameter>\n</function>\n</tool_call>"
)
HERMES = '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls -la"}}\n</tool_call>'
LLAMA = '{"name": "Bash", "parameters": {"command": "ls -la"}}'
XML = "<tool><tool_name>Read</tool_name><arguments><file_path>a.py</file_path></arguments></tool>"

Where = Literal["text", "thinking"]


def run(
    pieces: Iterable[str], where: Where = "text", stop: StopReason = "end_turn"
) -> tuple[list[Event], list[str]]:
    notices: list[str] = []
    rescue = Rescue(TOOLS, source="backend 'local' at localhost:11434", notice=notices.append)
    out: list[Event] = []
    for piece in pieces:
        out += rescue.events([TextDelta(piece) if where == "text" else ThinkingDelta(piece)])
    out += rescue.events([MessageEnd(stop)])
    check_invariants(out)
    return out, notices


def shape(events: Sequence[Event]) -> list[tuple[Any, ...]]:
    """The events as the same in any chunking: text merged, a call as (name, arguments)."""
    out: list[tuple[Any, ...]] = []
    names: dict[str, str] = {}
    for ev in events:
        if isinstance(ev, (TextDelta, ThinkingDelta)):
            if out and out[-1][0] == ev.type:
                out[-1] = (ev.type, out[-1][1] + ev.text)
            else:
                out.append((ev.type, ev.text))
        elif isinstance(ev, ToolCallStart):
            names[ev.id] = ev.name
        elif isinstance(ev, ToolCallEnd):
            out.append(("call", names[ev.id], ev.arguments, ev.error))
        elif isinstance(ev, MessageEnd):
            out.append(("end", ev.stop_reason))
    return out


def every_split(text: str) -> Iterable[list[str]]:
    yield [text]
    yield list(text)
    for cut in range(1, len(text)):
        yield split_at(text, [cut])


def test_qwen3_coder_without_its_opening_tag_becomes_a_call() -> None:
    events, notices = run([QWEN_NO_OPEN])
    assert shape(events) == [
        ("text_delta", "I'll read the file first.\n"),
        ("call", "Read", {"file_path": "src/app.py"}, None),
        ("end", "tool_use"),
    ]
    assert len(notices) == 1
    assert "backend 'local' at localhost:11434" in notices[0]
    assert "qwen3-coder" in notices[0]
    assert "`content`" in notices[0]


def test_hermes_in_the_reasoning_becomes_a_call() -> None:
    events, notices = run(["Let me list the files.\n", HERMES], where="thinking")
    assert shape(events) == [
        ("thinking_delta", "Let me list the files.\n"),
        ("call", "Bash", {"command": "ls -la"}, None),
        ("end", "tool_use"),
    ]
    assert "reasoning_content" in notices[0]


def test_xml_tags_become_a_call() -> None:
    events, _ = run(["Reading. ", XML])
    assert shape(events)[1:] == [("call", "Read", {"file_path": "a.py"}, None), ("end", "tool_use")]


def test_the_call_starts_before_it_ends() -> None:
    events, _ = run(list(QWEN_NO_OPEN))
    start = next(i for i, ev in enumerate(events) if isinstance(ev, ToolCallStart))
    first_field = next(i for i, ev in enumerate(events) if isinstance(ev, ToolCallDelta))
    end = next(i for i, ev in enumerate(events) if isinstance(ev, ToolCallEnd))
    assert start < first_field < end


def test_llama_json_as_the_whole_answer_becomes_a_call() -> None:
    events, notices = run(["\n", LLAMA])
    assert shape(events) == [
        ("text_delta", "\n"),
        ("call", "Bash", {"command": "ls -la"}, None),
        ("end", "tool_use"),
    ]
    assert "llama-json" in notices[0]


HARMONY = (
    '<|channel|>commentary to=functions.Bash <|constrain|>json<|message|>{"command": "ls -la"}'
    "<|call|>"
)


def test_a_harmony_call_in_the_content_becomes_a_call() -> None:
    # gpt-oss behind a server that passes its messages on unparsed.
    events, notices = run(["I will look.\n", HARMONY])
    assert shape(events) == [
        ("text_delta", "I will look.\n"),
        ("call", "Bash", {"command": "ls -la"}, None),
        ("end", "tool_use"),
    ]
    assert "openai_harmony" in notices[0]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (QWEN_NO_OPEN, "text"),
        ("Looking.\n" + HARMONY, "text"),
        ("Plan: list.\n" + HERMES + "\nDone.", "thinking"),
        (XML, "text"),
        (LLAMA, "text"),
    ],
)
def test_the_same_events_at_every_boundary(text: str, where: Where) -> None:
    whole = shape(run([text], where)[0])
    for pieces in every_split(text):
        assert shape(run(pieces, where)[0]) == whole, pieces


NEGATIVES = [
    # prose that mentions the markup
    "Qwen models call tools with <tool_call> tags; Hermes writes JSON inside them.",
    "I will not use <tool_call><function=Read> here, it is only a mention.",
    "To call a tool, models write <function=Read> followed by parameters.",
    # a code block showing a call format, for a declared tool
    'Here is the format:\n```\n<tool_call>\n{"name": "Bash", "arguments": '
    '{"command": "ls"}}\n</tool_call>\n```\nThat is all.',
    "Qwen3-Coder:\n~~~xml\n<function=Read>\n<parameter=file_path>\na.py\n</parameter>\n"
    "</function>\n~~~\n",
    'Inline: `<tool_call>{"name": "Bash", "arguments": {"command": "ls"}}</tool_call>`'
    " is how it looks.",
    "    ````md\n```\n<function=Read>\n<parameter=file_path>\nx\n</parameter>\n</function>\n```\n",
    # an undeclared name
    '<tool_call>\n{"name": "DeleteEverything", "arguments": {"path": "/"}}\n</tool_call>',
    "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>",
    "<tool><tool_name>rm</tool_name><arguments><p>x</p></arguments></tool>",
    # JSON that only looks like a call
    '{"name": "Read", "description": "Reads a file.", "type": "function"}',
    '{"name": "Alice", "arguments": {"age": 3}}',
    '{"type": "function", "name": "Read", "arguments": {"file_path": "a.py"}}',
    'The config is {"name": "Bash", "parameters": {"command": "ls"}} as JSON.',
    'Sure:\n{"name": "Read", "arguments": {"file_path": "a.py"}}',
    '```json\n{"name": "Read", "arguments": {"file_path": "a.py"}}\n```',
    # markup that starts like a call and is not one
    "<tool_call> is a special token.",
    "<function=Read> is what the template writes, then the parameters.",
    "a < b and b > c, <tool> is a tag",
    "gpt-oss writes <|channel|>commentary to=functions.NAME before a call's JSON.",
    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}<|call|>",
]


@pytest.mark.parametrize("text", NEGATIVES)
@pytest.mark.parametrize("where", ["text", "thinking"])
def test_no_false_calls(text: str, where: Where) -> None:
    kind = "text_delta" if where == "text" else "thinking_delta"
    for pieces in every_split(text):
        events, notices = run(pieces, where)
        assert shape(events) == [(kind, text), ("end", "end_turn")], pieces
        assert notices == []


def test_an_undeclared_call_stays_text_and_a_declared_one_after_it_is_taken() -> None:
    undeclared = '<tool_call>{"name": "Nope", "arguments": {}}</tool_call>\n'
    events, _ = run([undeclared + HERMES])
    assert shape(events) == [
        ("text_delta", undeclared),
        ("call", "Bash", {"command": "ls -la"}, None),
        ("end", "tool_use"),
    ]


def test_a_call_after_a_code_block_is_taken() -> None:
    text = "Format:\n```\n<tool_call>...</tool_call>\n```\nNow:\n" + HERMES
    for pieces in ([text], list(text)):
        events, _ = run(pieces)
        assert shape(events)[-2:] == [
            ("call", "Bash", {"command": "ls -la"}, None),
            ("end", "tool_use"),
        ]


def test_a_call_cut_by_max_tokens_is_never_run() -> None:
    cut = '<tool_call>\n{"name": "Bash", "arguments": {"command": "rm -rf bu'
    events, _ = run([cut], stop="max_tokens")
    ends = [ev for ev in events if isinstance(ev, ToolCallEnd)]
    assert len(ends) == 1
    assert not ends[0].ok
    assert events[-1] == MessageEnd("max_tokens")


def test_native_calls_pass_and_are_numbered_after_rescued_ones() -> None:
    notices: list[str] = []
    rescue = Rescue(TOOLS, notice=notices.append)
    out = rescue.events([TextDelta(HERMES)])
    out += rescue.events(
        [
            ToolCallStart("native_1", "Read", 0),
            ToolCallEnd("native_1", {"file_path": "b.py"}),
            MessageEnd("tool_use"),
        ]
    )
    check_invariants(out)
    starts = [ev for ev in out if isinstance(ev, ToolCallStart)]
    assert [(s.name, s.index) for s in starts] == [("Bash", 0), ("Read", 1)]
    assert starts[1].id == "native_1"
    assert starts[0].id != starts[1].id


def test_ids_differ_between_responses() -> None:
    first = [e for e in run([HERMES])[0] if isinstance(e, ToolCallStart)]
    second = [e for e in run([HERMES])[0] if isinstance(e, ToolCallStart)]
    assert first[0].id != second[0].id


def test_text_after_a_rescued_call_is_kept() -> None:
    events, _ = run([HERMES + "\nThat lists the files."])
    assert shape(events)[-2:] == [("text_delta", "\nThat lists the files."), ("end", "tool_use")]


def test_a_long_answer_keeps_every_character() -> None:
    prose = "".join(f"Line {i}: some `code` and a < sign.\n" for i in range(400))
    undeclared = '<tool_call>{"name": "Nope", "arguments": {}}</tool_call>\n'
    text = prose + undeclared + prose + HERMES + "\n" + prose
    for size in (len(text), 7, 64):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        events, _ = run(pieces)
        assert shape(events) == [
            ("text_delta", prose + undeclared + prose),
            ("call", "Bash", {"command": "ls -la"}, None),
            ("text_delta", "\n" + prose),
            ("end", "tool_use"),
        ]


def test_the_thinking_signature_comes_after_the_thinking() -> None:
    rescue = Rescue(TOOLS)
    out = rescue.events([ThinkingDelta("I think <tool"), ThinkingDelta("", signature="sig")])
    out += rescue.events([TextDelta("Answer."), MessageEnd("end_turn")])
    signed = next(i for i, ev in enumerate(out) if isinstance(ev, ThinkingDelta) and ev.signature)
    before = "".join(ev.text for ev in out[:signed] if isinstance(ev, ThinkingDelta))
    assert before == "I think <tool"
    assert shape(out[signed + 1 :]) == [("text_delta", "Answer."), ("end", "end_turn")]


ROOT = Path(__file__).resolve().parents[2]


def test_this_repositorys_docs_and_decoders_are_no_calls() -> None:
    """Prose and code about these very formats, as a model would answer with them: the
    docs as written, each decoder's source in a fence; read in 37-character deltas."""
    docs = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    sources = sorted((ROOT / "src" / "toolwire" / "decode").rglob("*.py"))
    texts = [p.read_text(encoding="utf-8") for p in docs]
    texts += [f"The file:\n```python\n{p.read_text(encoding='utf-8')}```\n" for p in sources]
    tools = {name: {"type": "object"} for name in ("Read", "Edit", "Write", "Bash", "Grep")}
    for text in texts:
        for where in ("text", "thinking"):
            rescue = Rescue(tools)
            out: list[Event] = []
            for i in range(0, len(text), 37):
                piece = text[i : i + 37]
                out += rescue.events(
                    [TextDelta(piece) if where == "text" else ThinkingDelta(piece)]
                )
            out += rescue.events([MessageEnd("end_turn")])
            assert not [e for e in out if isinstance(e, ToolCallStart)], text[:80]
            assert "".join(e.text for e in out if isinstance(e, TextDelta | ThinkingDelta)) == text


class _Rewriter:
    """A candidate that breaks the contract: its text is not its input."""

    def feed(self, text: str) -> list[Event]:
        return [TextDelta(text.upper())]

    def close(self) -> list[Event]:
        return []


def test_a_candidate_that_rewrites_its_text_is_ignored() -> None:
    candidates = (("rewriter", lambda tools: _Rewriter()), *CANDIDATES)
    rescue = Rescue(TOOLS, candidates=candidates)
    text = "Listing now.\n" + HERMES
    out: list[Event] = []
    for ch in text:
        out += rescue.events([TextDelta(ch)])
    out += rescue.events([MessageEnd("end_turn")])
    assert shape(out) == [
        ("text_delta", "Listing now.\n"),
        ("call", "Bash", {"command": "ls -la"}, None),
        ("end", "tool_use"),
    ]
