"""MiniMax-M2 tool calls: ``<minimax:tool_call><invoke name=...><parameter name=...>``."""

from __future__ import annotations

from functools import partial
from typing import Any

from tests.decode.formats_support import check_format
from tests.decode.tags_support import (
    assert_same_in_any_chunking,
    calls_of,
    decode_whole,
    ends_of,
    errors_of,
    field_values,
    start_chunk,
    text_of,
)
from tests.helpers import needs_shared
from toolwire.decode.tags import MiniMaxM2Decoder
from toolwire.events import ToolCallDelta

SCHEMAS: dict[str, dict[str, Any]] = {
    "search_web": {
        "properties": {
            "query_tag": {"type": "array", "items": {"type": "string"}},
            "query_list": {"type": "array"},
            "top_k": {"type": "integer"},
            "fresh": {"type": ["boolean", "null"]},
        }
    },
    "Write": {"properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}},
}
MiniMax = partial(MiniMaxM2Decoder, SCHEMAS)
# The two-call block of MiniMax-M2's tool-calling guide, with a third parameter.
GUIDE = (
    "Searching both.\n<minimax:tool_call>\n"
    '<invoke name="search_web">\n'
    '<parameter name="query_tag">["technology", "events"]</parameter>\n'
    '<parameter name="query_list">["\\"OpenAI\\" \\"latest\\" \\"release\\""]</parameter>\n'
    '<parameter name="top_k">5</parameter>\n'
    "</invoke>\n"
    '<invoke name="search_web">\n'
    '<parameter name="query_tag">["technology", "events"]</parameter>\n'
    '<parameter name="query_list">["\\"Gemini\\" \\"latest\\" \\"release\\""]</parameter>\n'
    "</invoke>\n</minimax:tool_call>"
)


@needs_shared
def test_the_peers_cases_under_every_chunking() -> None:
    check_format("minimax_m2", MiniMaxM2Decoder, {})


def test_the_guides_block_of_two_calls() -> None:
    events = decode_whole(MiniMax, GUIDE)
    assert calls_of(events) == [
        (
            "search_web",
            {
                "query_tag": ["technology", "events"],
                "query_list": ['"OpenAI" "latest" "release"'],
                "top_k": 5,
            },
        ),
        (
            "search_web",
            {"query_tag": ["technology", "events"], "query_list": ['"Gemini" "latest" "release"']},
        ),
    ]
    assert text_of(events) == "Searching both.\n"
    assert_same_in_any_chunking(MiniMax, GUIDE, range(0, len(GUIDE), 13))


def test_the_call_starts_when_its_invoke_tag_ends() -> None:
    start_chunk(MiniMax, GUIDE, GUIDE.index('">\n<parameter name="query_tag"') + 1)


def test_a_closing_tag_inside_a_value_is_value_text() -> None:
    content = '<parameter name="x">1</parameter>\n</parameter> is the close\n'
    text = (
        '<minimax:tool_call><invoke name="Write"><parameter name="content">'
        f'{content}</parameter><parameter name="file_path">m.xml</parameter>'
        "</invoke></minimax:tool_call>"
    )
    events = decode_whole(MiniMax, text)
    assert calls_of(events) == [("Write", {"content": content, "file_path": "m.xml"})]
    assert field_values(events) == {"content": content, "file_path": "m.xml"}


def test_null_and_quoting_variants() -> None:
    text = (
        "<minimax:tool_call><invoke name='search_web'><parameter name=top_k>3</parameter>"
        '<parameter name="fresh">null</parameter></invoke></minimax:tool_call>'
    )
    assert calls_of(decode_whole(MiniMax, text)) == [("search_web", {"top_k": 3, "fresh": None})]


def test_a_block_without_an_invoke_reverts_to_text() -> None:
    text = "The block token <minimax:tool_call> wraps each call."
    events = decode_whole(MiniMax, text)
    assert calls_of(events) == []
    assert text_of(events) == text
    assert len(errors_of(events)) == 1


def test_a_call_cut_by_max_tokens_fails() -> None:
    cut = GUIDE[: GUIDE.index("technology") + 4]
    events = decode_whole(MiniMax, cut)
    [end] = ends_of(events)
    assert not end.ok
    assert text_of(events) == "Searching both.\n"


def test_a_long_value_streams_as_it_arrives() -> None:
    body = "".join(f"<p>{i} &amp; é</p>\n" for i in range(400))
    head = f'<minimax:tool_call>\n<invoke name="Write">\n<parameter name="content">{body}'
    decoder = MiniMax()
    streamed = ""
    for n in range(0, len(head), 50):
        events = decoder.feed(head[n : n + 50])
        streamed += "".join(ev.text for ev in events if isinstance(ev, ToolCallDelta))
    assert body[:-20] in streamed
    events = decoder.feed("</parameter>\n</invoke>")
    assert field_values(events) == {"content": body}
    assert [end.arguments for end in ends_of(events)] == [{"content": body}]
