"""Seed-OSS tool calls: Qwen3-Coder markup in ``<seed:tool_call>``, after ``<seed:think>``."""

from __future__ import annotations

from functools import partial
from typing import Any

from tests.decode.formats_support import check_format
from tests.decode.tags_support import (
    assert_same_in_any_chunking,
    calls_of,
    decode_whole,
    ends_of,
    start_chunk,
    text_of,
)
from tests.helpers import needs_shared
from toolwire.decode.tags import SeedOssDecoder

SCHEMAS: dict[str, dict[str, Any]] = {
    "get_weather": {
        "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
        "additionalProperties": False,
    }
}
Seed = partial(SeedOssDecoder, SCHEMAS)
CALL = (
    "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Paris, France</parameter>\n"
    "<parameter=days>3</parameter>\n</function>\n</seed:tool_call>"
)
# The model spells the call out while it thinks, then makes it.
THINK = (
    "<seed:think>The format is <seed:tool_call>\n<function=get_weather>\n"
    "<parameter=location>Paris</parameter>\n</function>\n</seed:tool_call>, so I call it."
    "</seed:think>\n"
)


@needs_shared
def test_the_peers_cases_under_every_chunking() -> None:
    check_format("seed_oss", SeedOssDecoder, {})


def test_a_call_typed_by_its_schema() -> None:
    events = decode_whole(Seed, CALL)
    assert calls_of(events) == [("get_weather", {"location": "Paris, France", "days": 3})]
    assert text_of(events) == ""
    assert_same_in_any_chunking(Seed, CALL, range(0, len(CALL), 6))


def test_a_call_spelled_out_while_thinking_is_text() -> None:
    events = decode_whole(Seed, THINK + CALL)
    assert calls_of(events) == [("get_weather", {"location": "Paris, France", "days": 3})]
    assert text_of(events) == THINK
    assert_same_in_any_chunking(Seed, THINK + CALL, range(0, len(THINK) + len(CALL), 4))


def test_an_unclosed_think_block_stays_text() -> None:
    events = decode_whole(Seed, THINK[: THINK.index("</seed:think>")])
    assert calls_of(events) == []
    assert text_of(events) == THINK[: THINK.index("</seed:think>")]


def test_the_call_starts_when_its_name_ends() -> None:
    start_chunk(Seed, CALL, CALL.index(">\n<parameter=location>"))


def test_qwen3_coder_blocks_are_not_seed_calls() -> None:
    text = CALL.replace("seed:tool_call", "tool_call")
    events = decode_whole(SeedOssDecoder, text)
    assert calls_of(events) == []
    assert text_of(events) == text


def test_a_call_cut_by_max_tokens_fails() -> None:
    [end] = ends_of(decode_whole(Seed, CALL[: CALL.index("France")]))
    assert not end.ok


def test_a_value_is_the_text_between_its_tags() -> None:
    # The template writes values inline: a file's final newline is part of the file.
    text = CALL.replace("Paris, France", "\nline one\nline two\n")
    [(_, args)] = calls_of(decode_whole(Seed, text))
    assert args["location"] == "\nline one\nline two\n"
