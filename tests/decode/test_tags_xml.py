"""XML-tags tool calls: what an editor sees from a model's text."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decode.tags_support import (
    assert_no_markup_leak,
    assert_same_in_any_chunking,
    calls_of,
    decode_split,
    decode_whole,
    deltas_text,
    ends_of,
    errors_of,
    field_values,
    fields_of,
    merge_adjacent,
    start_chunk,
    text_of,
)
from tests.helpers import cut_points
from toolwire.decode.tags import XmlTagsDecoder
from toolwire.events import TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

FILE_CONTENT = "if a < b && c > \"d\":\n    print('héllo wörld 😀')\n"

WRITE_CDATA = (
    "I'll create the file.\n"
    "<tool>\n<server_name>local</server_name>\n<tool_name>Write</tool_name>\n<arguments>\n"
    "<file_path>src/app.py</file_path>\n"
    f"<content><![CDATA[{FILE_CONTENT}]]></content>\n"
    "</arguments>\n</tool>\nDone."
)
WRITE_ENTITIES = (
    "<tool><tool_name>Write</tool_name><arguments>"
    "<file_path> src/app.py </file_path>"
    "<content>if a &lt; b &amp;&amp; c &gt; &quot;d&quot;:&#10;    print(&apos;h&#233;llo"
    " w&#xF6;rld 😀&apos;)&#10;</content>"
    "</arguments></tool>"
)
TODOS = (
    "Plan:<tool><tool_name>TodoWrite</tool_name><arguments><todos>"
    "<todo><content>Read the code</content><status>completed</status></todo>"
    "<todo><content>Fix &amp; test</content><status>in_progress</status></todo>"
    "</todos></arguments></tool>"
)
BACK_TO_BACK = (
    "First <tool><tool_name>Read</tool_name><arguments><file_path>a.py</file_path>"
    "</arguments></tool><tool><tool_name>Read</tool_name><arguments><file_path>b.py"
    "</file_path></arguments></tool> then <tool><tool_name>Bash</tool_name><arguments>"
    "<command>ls -la</command></arguments></tool> end"
)
SAMPLES = [WRITE_CDATA, WRITE_ENTITIES, TODOS, BACK_TO_BACK]
# Broken or cut-off markup: the events must not depend on the chunking either.
ODD = [
    "Wrap calls in a <tool> element, like <tool> this.",
    "a<tool><tool_name>Re<b>ad</tool_name></tool>z",
    "<tool><tool_name>Edit</tool_name><arguments><a>1</b></arguments></tool>ok",
    "<tool><tool_name>W</tool_name><arguments><p>x</tool>ok<tool><tool_name>V</tool_name>",
    "<tool><tool_name>Read</tool_name><arguments><p>x</p></tool>after <tool><too",
    "x <tool><server_name>s</server_name><tool_name>" + "n" * 300 + "</tool_name>",
    "<tool><tool_name>W</tool_name><arguments><c><![CDATA[</tool>]]><!-- </tool> --></c><d",
]


def test_write_with_cdata_keeps_content_verbatim() -> None:
    events = decode_whole(XmlTagsDecoder, WRITE_CDATA)
    assert text_of(events) == "I'll create the file.\n\nDone."
    assert calls_of(events) == [("Write", {"file_path": "src/app.py", "content": FILE_CONTENT})]
    start = next(ev for ev in events if isinstance(ev, ToolCallStart))
    assert (start.id, start.name, start.index) == ("call_0", "Write", 0)
    # The deltas are the call's markup after the name, as the model wrote it.
    markup = WRITE_CDATA[WRITE_CDATA.index("</tool_name>") + 12 : WRITE_CDATA.index("\n</tool>")]
    assert deltas_text(events, "call_0") == markup + "\n"


def test_entities_are_decoded_and_plain_text_trimmed() -> None:
    events = decode_whole(XmlTagsDecoder, WRITE_ENTITIES)
    assert calls_of(events) == [("Write", {"file_path": "src/app.py", "content": FILE_CONTENT})]


def test_cdata_may_hold_closing_and_name_tags() -> None:
    text = (
        "<tool><tool_name>Write</tool_name><arguments><file_path>doc.md</file_path>"
        "<content><![CDATA[use </tool> and <tool_name>x</tool_name> and ]]]]><![CDATA[>]]>"
        "</content></arguments></tool>after"
    )
    events = decode_whole(XmlTagsDecoder, text)
    content = "use </tool> and <tool_name>x</tool_name> and ]]>"
    assert calls_of(events) == [("Write", {"file_path": "doc.md", "content": content})]
    assert text_of(events) == "after"


def test_nested_elements_are_objects_and_repeated_names_arrays() -> None:
    events = decode_whole(XmlTagsDecoder, TODOS)
    todos = [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix & test", "status": "in_progress"},
    ]
    assert calls_of(events) == [("TodoWrite", {"todos": {"todo": todos}})]
    assert text_of(events) == "Plan:"


def test_back_to_back_calls_each_start_and_text_between_is_kept() -> None:
    events = decode_whole(XmlTagsDecoder, BACK_TO_BACK)
    assert calls_of(events) == [
        ("Read", {"file_path": "a.py"}),
        ("Read", {"file_path": "b.py"}),
        ("Bash", {"command": "ls -la"}),
    ]
    starts = [ev for ev in events if isinstance(ev, ToolCallStart)]
    assert [(s.id, s.index) for s in starts] == [("call_0", 0), ("call_1", 1), ("call_2", 2)]
    assert text_of(events) == "First  then  end"


def test_server_name_is_optional_and_arguments_may_be_absent() -> None:
    text = (
        "<tool><tool_name>Ping</tool_name></tool><tool><tool_name>Ls</tool_name><arguments/></tool>"
    )
    assert calls_of(decode_whole(XmlTagsDecoder, text)) == [("Ping", {}), ("Ls", {})]


def test_leaf_values_keep_intended_whitespace_and_unknown_entities() -> None:
    text = (
        "<tool><tool_name>Edit</tool_name><arguments>"
        "<old_string>&#32;&#32;x = 1&#10;</old_string>"
        "<new_string>\n  <![CDATA[  y = 2  ]]>\n</new_string>"
        "<note>a & b &nbsp; &#0; c</note><expr>a < b</expr><empty></empty>"
        "</arguments></tool>"
    )
    args = calls_of(decode_whole(XmlTagsDecoder, text))[0][1]
    assert args == {
        "old_string": "  x = 1\n",
        "new_string": "  y = 2  ",
        "note": "a & b &nbsp; &#0; c",
        "expr": "a < b",
        "empty": "",
    }


def test_fields_title_the_call_before_the_content_streams() -> None:
    decoder = XmlTagsDecoder()
    events = decoder.feed(WRITE_CDATA[: WRITE_CDATA.index("<![CDATA[")])
    assert fields_of(events) == ["file_path"]
    assert field_values(events) == {"file_path": "src/app.py"}
    events += decoder.feed(WRITE_CDATA[WRITE_CDATA.index("<![CDATA[") :]) + decoder.close()
    assert fields_of(events) == ["file_path", "content"]
    assert field_values(events) == {"file_path": "src/app.py", "content": FILE_CONTENT}


def test_content_streams_before_the_element_closes() -> None:
    body = "x = 1\n" * 2000
    text = f"<tool><tool_name>Write</tool_name><arguments><content><![CDATA[{body}]]>"
    decoder = XmlTagsDecoder()
    streamed = ""
    for i in range(0, len(text), 50):
        for ev in decoder.feed(text[i : i + 50]):
            if isinstance(ev, ToolCallDelta):
                streamed += ev.text
    assert body in streamed


def test_start_goes_out_on_the_chunk_that_closes_the_name() -> None:
    start_chunk(XmlTagsDecoder, WRITE_CDATA, WRITE_CDATA.index("</tool_name>") + 11)


def test_a_partial_tag_is_held_back_never_leaked() -> None:
    decoder = XmlTagsDecoder()
    assert decoder.feed("Hello <too") == [TextDelta("Hello ")]
    assert decoder.feed("lbox> is") == [TextDelta("<toolbox> is")]
    assert decoder.feed(" here <") == [TextDelta(" here ")]
    assert decoder.close() == [TextDelta("<")]
    for sample in SAMPLES:
        assert_no_markup_leak(XmlTagsDecoder, sample)


def test_prose_mentioning_the_tag_stays_text_without_an_error() -> None:
    text = "Wrap calls in a <tool> element, like <tool> this."
    events = decode_whole(XmlTagsDecoder, text)
    assert events
    assert text_of(events) == text
    assert not errors_of(events)
    assert not calls_of(events)


def test_a_broken_header_is_reported_and_shown_as_text() -> None:
    text = "a<tool><tool_name>Re<b>ad</tool_name></tool>z"
    events = decode_whole(XmlTagsDecoder, text)
    assert text_of(events) == text
    assert not calls_of(events)
    [error] = errors_of(events)
    assert error.raw == "<tool><tool_name>Re"


def test_a_call_cut_off_ends_with_an_error_and_its_raw_markup() -> None:
    text = "Writing:<tool><tool_name>Write</tool_name><arguments><file_path>a.py</file_path><con"
    events = decode_whole(XmlTagsDecoder, text)
    [end] = ends_of(events)
    assert not end.ok
    assert end.raw == "<arguments><file_path>a.py</file_path><con"
    assert text_of(events) == "Writing:"


def test_a_cut_header_is_flushed_as_text() -> None:
    events = decode_whole(XmlTagsDecoder, "see <tool><tool_name>Wri")
    assert text_of(events) == "see <tool><tool_name>Wri"
    assert not calls_of(events)


def test_malformed_arguments_fail_that_call_only() -> None:
    text = (
        "<tool><tool_name>Edit</tool_name><arguments><a>1</b></arguments></tool>ok"
        "<tool><tool_name>Read</tool_name><arguments><p>x</p></arguments></tool>"
    )
    events = decode_whole(XmlTagsDecoder, text)
    first, second = ends_of(events)
    assert first.error is not None
    assert "</b>" in first.error
    assert first.raw == "<arguments><a>1</b></arguments>"
    assert second.arguments == {"p": "x"}
    assert text_of(events) == "ok"


def test_missing_closing_arguments_tag_is_tolerated() -> None:
    text = "<tool><tool_name>Read</tool_name><arguments><p>x</p></tool>after"
    events = decode_whole(XmlTagsDecoder, text)
    assert calls_of(events) == [("Read", {"p": "x"})]
    assert text_of(events) == "after"


def test_call_end_inside_an_open_element_fails_without_swallowing_text() -> None:
    events = decode_whole(XmlTagsDecoder, "<tool><tool_name>W</tool_name><arguments><p>x</tool>ok")
    [end] = ends_of(events)
    assert not end.ok
    assert text_of(events) == "ok"


def test_json_arguments_are_accepted() -> None:
    text = '<tool><tool_name>Read</tool_name><arguments>{"file_path": "a.py"}</arguments></tool>'
    assert calls_of(decode_whole(XmlTagsDecoder, text)) == [("Read", {"file_path": "a.py"})]


def test_an_argument_named_tool_does_not_end_the_call() -> None:
    text = "<tool><tool_name>Use</tool_name><arguments><tool>grep</tool></arguments></tool>"
    assert calls_of(decode_whole(XmlTagsDecoder, text)) == [("Use", {"tool": "grep"})]


@settings(max_examples=60, deadline=None)
@given(sample=st.sampled_from(SAMPLES + ODD), cuts=cut_points(600))
def test_any_chunking_gives_the_same_events(sample: str, cuts: list[int]) -> None:
    assert_same_in_any_chunking(XmlTagsDecoder, sample, cuts)


# -- round trip: arguments rendered as XML come back equal, whatever the chunking --------

_NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
_TEXT = st.lists(
    st.sampled_from(["a", "é", "😀", " ", "\n", "\t", "<", ">", "&", "&amp;", '"', "'"])
    | st.sampled_from(["]]>", "]]", "<![CDATA[", "</tool>", "<tool_name>", "\r"]),
    max_size=12,
).map("".join)
_VALUES = st.recursive(
    _TEXT,
    lambda inner: (
        st.dictionaries(_NAMES, inner, min_size=1, max_size=3)
        | st.lists(_TEXT, min_size=2, max_size=3)
    ),
    max_leaves=6,
)
_ARGS = st.dictionaries(_NAMES, _VALUES, max_size=4)


def _refs(text: str) -> str:
    return "".join(f"&#{ord(c)};" for c in text)


def _escape(text: str) -> str:
    body = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # Whitespace at the ends of plain text is trimmed: write it as character references.
    core = body.strip(" \t\r\n")
    if not core:
        return _refs(body)
    lead = body.index(core)
    return _refs(body[:lead]) + core + _refs(body[lead + len(core) :])


def _cdata(text: str) -> str:
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def render_xml(name: str, args: dict[str, Any], cdata: bool) -> str:
    def element(key: str, value: Any) -> str:
        if isinstance(value, list):
            return "".join(element(key, v) for v in value)
        if isinstance(value, dict):
            inner = "\n".join(element(k, v) for k, v in value.items())
            return f"<{key}>\n{inner}\n</{key}>"
        return f"<{key}>{_cdata(value) if cdata else _escape(value)}</{key}>"

    body = "\n".join(element(k, v) for k, v in args.items())
    return f"<tool><tool_name>{name}</tool_name><arguments>\n{body}\n</arguments></tool>"


@settings(max_examples=150, deadline=None)
@given(
    args=_ARGS,
    cdata=st.booleans(),
    before=_TEXT.filter(lambda t: "<tool>" not in t),
    cuts=cut_points(400),
)
def test_round_trip(args: dict[str, Any], cdata: bool, before: str, cuts: list[int]) -> None:
    text = before + render_xml("Tool", args, cdata) + "bye"
    events = decode_split(XmlTagsDecoder, text, cuts)
    assert calls_of(events) == [("Tool", args)]
    assert text_of(events) == before + "bye"
    assert merge_adjacent(events) == merge_adjacent(decode_whole(XmlTagsDecoder, text))
    end = ends_of(events)[0]
    assert isinstance(end, ToolCallEnd)
    assert end.ok


def test_a_far_repeat_extends_the_array_without_changing_what_was_emitted() -> None:
    text = (
        "<tool><tool_name>T</tool_name><arguments>"
        "<a>1</a><a>2</a><b>x</b><a>3</a></arguments></tool>"
    )
    events = decode_whole(XmlTagsDecoder, text)
    assert calls_of(events) == [("T", {"a": ["1", "2", "3"], "b": "x"})]
    assert fields_of(events) == ["a", "b"]
    assert field_values(events) == {"a": ["1", "2"], "b": "x"}
