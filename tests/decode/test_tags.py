"""What the three text formats share: held-back tags, the decoder contract, linear work."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.decode.tags_support import (
    Factory,
    calls_of,
    chunks,
    decode,
    decode_split,
    merge_adjacent,
)
from tests.helpers import cut_points
from toolwire.decode import decoder_for
from toolwire.decode import tags as tags_pkg
from toolwire.decode.tags import HermesDecoder, Qwen3CoderDecoder, XmlTagsDecoder
from toolwire.decode.tags._holdback import TagSet, expect
from toolwire.errors import UsageError
from toolwire.events import MessageEnd, TextDelta, ToolCallStart

OPEN_TAG: dict[Factory, str] = {
    XmlTagsDecoder: "<tool>",
    HermesDecoder: "<tool_call>",
    Qwen3CoderDecoder: "<tool_call>",
}
DECODERS = pytest.mark.parametrize("factory", list(OPEN_TAG), ids=lambda f: f.__name__)


def render(factory: Factory, name: str, content: str) -> str:
    """One ``Write``-style call with a ``content`` argument, in the decoder's format."""
    if factory is XmlTagsDecoder:
        return (
            f"<tool><tool_name>{name}</tool_name><arguments>"
            f"<content><![CDATA[{content}]]></content></arguments></tool>"
        )
    if factory is HermesDecoder:
        args = json.dumps({"content": content})
        return f'<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'
    return (
        f"<tool_call>\n<function={name}>\n<parameter=content>\n{content}\n</parameter>\n"
        "</function>\n</tool_call>"
    )


# -- the holdback primitive ----------------------------------------------------------------


def test_scan_finds_the_first_tag_and_holds_back_only_what_could_begin_one() -> None:
    tags = TagSet("<tool>", "<tool_call>")
    assert tags.scan("ab<tool>c", 0) == (2, "<tool>")
    assert tags.scan("x<tool_call>", 1) == (1, "<tool_call>")
    assert tags.scan("ab<tool_c", 0) == (2, None)  # could still be <tool_call>
    assert tags.scan("ab<toolx", 0) == (8, None)  # cannot become a tag: all safe
    assert tags.scan("a < b <", 0) == (6, None)


def test_a_short_tag_waits_when_a_longer_one_could_start_there() -> None:
    tags = TagSet("<![CDATA[", "<")
    assert tags.scan("x<![CD", 0) == (1, None)
    assert tags.scan("x<![CDATA[", 0) == (1, "<![CDATA[")
    assert tags.scan("x<b", 0) == (1, "<")


def test_expect_says_yes_not_yet_or_no() -> None:
    options = ("<arguments>", "</tool>")
    assert expect("x</tool>", 1, options) == "</tool>"
    assert expect("x</to", 1, options) == ""
    assert expect("x", 1, options) == ""
    assert expect("x<b>", 1, options) is None


@given(
    text=st.text(alphabet="<tol_ca>x", max_size=30),
    tag=st.sampled_from(["<tool>", "<tool_call>", "]]>"]),
)
def test_holdback_is_exactly_the_longest_suffix_that_could_begin_the_tag(
    text: str, tag: str
) -> None:
    assume(tag not in text)  # holdback is asked only when no whole tag was found
    hold = TagSet(tag).holdback(text, 0)
    assert len(text) - hold < len(tag)
    assert tag.startswith(text[hold:])
    assert not any(tag.startswith(text[i:]) for i in range(hold))


# -- the decoder contract ------------------------------------------------------------------


@DECODERS
def test_plain_text_goes_out_at_once(factory: Factory) -> None:
    decoder = factory()
    assert decoder.feed("Hello, world: a < b > c") == [TextDelta("Hello, world: a < b > c")]
    assert decoder.feed("") == []
    assert decoder.close() == []


@DECODERS
def test_text_is_held_back_only_while_it_could_begin_the_tag(factory: Factory) -> None:
    tag = OPEN_TAG[factory]
    for k in range(1, len(tag)):
        decoder = factory()
        assert decoder.feed("x" + tag[:k]) == [TextDelta("x")]
        assert decoder.feed("!") == [TextDelta(tag[:k] + "!")]
        decoder = factory()
        decoder.feed(tag[:k])
        assert decoder.close() == [TextDelta(tag[:k])]


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["<", ">", "/", "tool", "_call", "_name", "=", "function", " ", "\n", "é"])
    ).map("".join),
    cuts=cut_points(80),
)
def test_text_without_a_call_comes_out_whole_in_any_chunking(text: str, cuts: list[int]) -> None:
    for factory, tag in OPEN_TAG.items():
        if tag in text:
            continue
        events = merge_adjacent(decode_split(factory, text, cuts))
        assert events == ([TextDelta(text)] if text else [])


@DECODERS
def test_call_ids_are_minted_in_order_per_decoder(factory: Factory) -> None:
    text = render(factory, "A", "1") + " and " + render(factory, "B", "2")
    for _ in range(2):  # a new decoder starts again at call_0
        starts = [ev for ev in decode(factory, [text]) if isinstance(ev, ToolCallStart)]
        assert [(s.id, s.name, s.index) for s in starts] == [("call_0", "A", 0), ("call_1", "B", 1)]


@DECODERS
def test_feed_after_close_is_a_usage_error(factory: Factory) -> None:
    decoder = factory()
    assert decoder.feed("hi <") == [TextDelta("hi ")]
    assert decoder.close() == [TextDelta("<")]
    assert decoder.close() == []
    with pytest.raises(UsageError):
        decoder.feed("more")


@DECODERS
def test_a_2mb_argument_decodes_in_linear_time(factory: Factory) -> None:
    # Peers re-scan the whole buffer per chunk: 2 MB in 64-char chunks would take minutes.
    content = "".join(f"line {i}: if a < b && c > 'd': é\n" for i in range(60_000))
    text = "Writing.\n" + render(factory, "Write", content) + "\nDone."
    began = time.perf_counter()
    events = decode(factory, chunks(text, 64))
    assert time.perf_counter() - began < 15  # about 0.3 s on a laptop
    assert calls_of(events) == [("Write", {"content": content})]


@pytest.mark.parametrize("fmt", ["xml-tags", "hermes", "qwen3-coder"])
def test_the_registry_feeds_them_bytes_and_ends_the_message(fmt: str) -> None:
    factory = {"xml-tags": XmlTagsDecoder, "hermes": HermesDecoder}.get(fmt, Qwen3CoderDecoder)
    data = ("héllo " + render(factory, "Write", "wörld")).encode()
    decoder = decoder_for(fmt)
    events = [ev for i in range(len(data)) for ev in decoder.feed(data[i : i + 1])]
    events += decoder.close()
    assert calls_of(events) == [("Write", {"content": "wörld"})]
    assert events[-1] == MessageEnd("tool_use")


def test_public_names() -> None:
    assert tags_pkg.__all__ == [
        "Glm45Decoder",
        "HarmonyDecoder",
        "HermesDecoder",
        "KimiK2Decoder",
        "MiniMaxM2Decoder",
        "Qwen3CoderDecoder",
        "SeedOssDecoder",
        "XmlTagsDecoder",
    ]
