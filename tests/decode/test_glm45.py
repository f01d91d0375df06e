"""GLM-4.5 tool calls: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>``."""

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
from toolwire.decode.tags import Glm45Decoder
from toolwire.events import ToolCallDelta

DIFFERENCES = {
    "vllm-glm45-incomplete_tool_call": (
        "a call cut before </tool_call> started early and fails (it is reported, never "
        "run); vLLM shows the markup as content"
    ),
}
SCHEMAS: dict[str, dict[str, Any]] = {
    "Write": {"properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}},
    "Search": {
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "exact": {"type": "boolean"},
            "filters": {"type": "object"},
            "tags": {"type": "array"},
        }
    },
}
Glm = partial(Glm45Decoder, SCHEMAS)
# As the GLM-4.5 chat template renders a call (GLM-4.7 writes it without the newlines).
WRITE = (
    "I'll write it.\n<tool_call>Write\n<arg_key>file_path</arg_key>\n<arg_value>src/a.py"
    "</arg_value>\n<arg_key>content</arg_key>\n<arg_value>print('hé')\n</arg_value>\n"
    "</tool_call>Done."
)


@needs_shared
def test_the_peers_cases_under_every_chunking() -> None:
    check_format("glm45", Glm45Decoder, DIFFERENCES)


def test_a_write_call_keeps_its_value_exactly() -> None:
    events = decode_whole(Glm, WRITE)
    assert calls_of(events) == [("Write", {"file_path": "src/a.py", "content": "print('hé')\n"})]
    assert text_of(events) == "I'll write it.\nDone."
    assert field_values(events) == {"file_path": "src/a.py", "content": "print('hé')\n"}
    assert_same_in_any_chunking(Glm, WRITE, [5, 20, 33, 60, 61, 100])


def test_the_glm47_form_without_newlines() -> None:
    text = (
        "<tool_call>Search<arg_key>query</arg_key><arg_value>cats</arg_value>"
        "<arg_key>limit</arg_key><arg_value>3</arg_value></tool_call>"
    )
    assert calls_of(decode_whole(Glm, text)) == [("Search", {"query": "cats", "limit": 3})]


def test_the_call_starts_as_soon_as_its_name_ends() -> None:
    start_chunk(Glm, WRITE, WRITE.index("Write\n") + len("Write"))
    inline = "<tool_call>Search<arg_key>query</arg_key>"
    start_chunk(Glm, inline, inline.index("<arg_key>"))


def test_values_are_typed_by_the_declared_schema() -> None:
    text = (
        "<tool_call>Search\n<arg_key>query</arg_key>\n<arg_value>42</arg_value>\n"
        "<arg_key>limit</arg_key>\n<arg_value>10</arg_value>\n"
        "<arg_key>exact</arg_key>\n<arg_value>true</arg_value>\n"
        '<arg_key>filters</arg_key>\n<arg_value>{"lang": "en"}</arg_value>\n'
        '<arg_key>tags</arg_key>\n<arg_value>["a", "b"]</arg_value>\n</tool_call>'
    )
    want = {
        "query": "42",
        "limit": 10,
        "exact": True,
        "filters": {"lang": "en"},
        "tags": ["a", "b"],
    }
    assert calls_of(decode_whole(Glm, text)) == [("Search", want)]
    # Without the tool list every value is the string the model wrote.
    untyped = {k: v if isinstance(v, str) else text_value(text, k) for k, v in want.items()}
    assert calls_of(decode_whole(Glm45Decoder, text)) == [("Search", untyped)]


def text_value(text: str, key: str) -> str:
    after = text.split(f"<arg_key>{key}</arg_key>\n<arg_value>", 1)[1]
    return after.split("</arg_value>", 1)[0]


def test_a_closing_tag_inside_a_value_is_value_text() -> None:
    # Code that writes this very format: only a close that another key or the call's
    # end follows ends the value.
    content = 'out = "</arg_value>"\nprint("</arg_value> done")\n'
    text = (
        f"<tool_call>Write\n<arg_key>content</arg_key>\n<arg_value>{content}</arg_value>\n"
        "<arg_key>file_path</arg_key>\n<arg_value>w.py</arg_value>\n</tool_call>"
    )
    assert calls_of(decode_whole(Glm, text)) == [
        ("Write", {"content": content, "file_path": "w.py"})
    ]
    assert_same_in_any_chunking(Glm, text, range(0, len(text), 7))


def test_a_call_cut_by_max_tokens_fails() -> None:
    cut = WRITE[: WRITE.index("print(") + 3]
    events = decode_whole(Glm, cut)
    [end] = ends_of(events)
    assert not end.ok
    assert "ended before" in (end.error or "")
    # Complete values but no </tool_call>: more arguments may have been coming.
    cut = WRITE[: WRITE.index("</tool_call>")]
    assert not ends_of(decode_whole(Glm, cut))[0].ok


def test_prose_after_the_tag_reverts_to_text() -> None:
    text = 'Wrap the call in <tool_call> and a name.\n<tool_call>{"name": "Write"}</tool_call>'
    events = decode_whole(Glm, text)
    assert calls_of(events) == []
    assert text_of(events) == text
    assert len(errors_of(events)) == 2  # each block had begun as a special token
    assert_same_in_any_chunking(Glm, text, [3, 17, 18, 30])


def test_a_word_of_prose_between_the_tags_is_no_call() -> None:
    text = "Hermes wraps calls in <tool_call> and </tool_call>."
    events = decode_whole(Glm, text)
    assert calls_of(events) == []
    assert text_of(events) == text


def test_a_long_value_streams_as_it_arrives() -> None:
    # vLLM issue 32829: a long code value must reach the client while it is written.
    body = "".join(f"line {i}: a < b\n" for i in range(400))
    head = f"<tool_call>Write\n<arg_key>content</arg_key>\n<arg_value>{body}"
    decoder = Glm()
    streamed = ""
    for n in range(0, len(head), 50):
        events = decoder.feed(head[n : n + 50])
        streamed += "".join(ev.text for ev in events if isinstance(ev, ToolCallDelta))
        assert not [ev for ev in events if isinstance(ev, ToolCallDelta) and ev.fields]
    assert body[:-20] in streamed
    events = decoder.feed("</arg_value>\n</tool_call>")
    assert field_values(events) == {"content": body}
