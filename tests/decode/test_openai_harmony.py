"""gpt-oss (OpenAI harmony) messages in a model's text: reasoning, answers, tool calls."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

import pytest

from tests.decode.formats_support import assert_same_in_any_chunking, check_format
from tests.decode.tags_support import (
    calls_of,
    decode_whole,
    ends_of,
    errors_of,
    fields_of,
    start_chunk,
    text_of,
)
from tests.helpers import needs_shared
from toolwire.decode.tags import HarmonyDecoder
from toolwire.events import Event, ThinkingDelta

DIFFERENCES = {
    "llamacpp-harmony-final_reasoning_none": (
        "the analysis message is reasoning (a thinking delta), not content with its markers; "
        "llama.cpp keeps it in content only when asked for no reasoning format"
    ),
}
Harmony = partial(HarmonyDecoder, {"get_weather": {}, "lookup": {}})
# A response as the harmony format guide shows one: reasoning, then a call.
CALL = (
    "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location": "San Francisco", "unit": "celsius"}<|call|>'
)
FINAL = (
    "<|channel|>analysis<|message|>User asks a simple question.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>It is 20 degrees.<|return|>"
)


def thinking_of(events: Iterable[Event]) -> str:
    return "".join(ev.text for ev in events if isinstance(ev, ThinkingDelta))


@needs_shared
def test_the_peers_cases_under_every_chunking() -> None:
    check_format("openai_harmony", HarmonyDecoder, DIFFERENCES)


def test_reasoning_then_a_call() -> None:
    events = decode_whole(Harmony, CALL)
    assert calls_of(events) == [("get_weather", {"location": "San Francisco", "unit": "celsius"})]
    assert thinking_of(events) == "Need to use function get_weather."
    assert text_of(events) == ""
    assert fields_of(events) == ["location", "unit"]
    assert_same_in_any_chunking(Harmony, CALL, range(0, len(CALL), 9))


def test_reasoning_then_a_final_answer() -> None:
    events = decode_whole(Harmony, FINAL)
    assert calls_of(events) == []
    assert thinking_of(events) == "User asks a simple question."
    assert text_of(events) == "It is 20 degrees."
    assert_same_in_any_chunking(Harmony, FINAL, range(0, len(FINAL), 5))


def test_the_call_starts_when_its_recipient_ends() -> None:
    start_chunk(Harmony, CALL, CALL.index("get_weather <|constrain|>") + len("get_weather"))


def test_a_message_to_a_built_in_tool_stays_text() -> None:
    text = (
        "<|start|>assistant<|channel|>analysis to=browser.search <|constrain|>json"
        '<|message|>{"query": "weather"}<|call|>'
    )
    events = decode_whole(Harmony, text)
    assert calls_of(events) == []
    assert text_of(events) == text
    assert errors_of(events)


def test_a_recipient_without_the_functions_prefix_counts_when_declared() -> None:
    text = '<|start|>assistant to=lookup<|channel|>commentary<|message|>{"q": 1}<|call|>'
    assert calls_of(decode_whole(Harmony, text)) == [("lookup", {"q": 1})]
    assert calls_of(decode_whole(HarmonyDecoder, text)) == []


def test_broken_or_cut_arguments_fail_the_call() -> None:
    broken = CALL.replace('"celsius"}', '"celsius" oops}')
    [end] = ends_of(decode_whole(Harmony, broken))
    assert not end.ok
    cut = CALL[: CALL.index("San") + 2]
    [end] = ends_of(decode_whole(Harmony, cut))
    assert not end.ok


def test_end_tokens_outside_a_message_are_text() -> None:
    text = "Harmony ends a turn with <|return|> and a call with <|call|>."
    events = decode_whole(Harmony, text)
    assert text_of(events) == text
    assert calls_of(events) == []


def test_arguments_stream_and_fields_complete_before_the_call_ends() -> None:
    decoder = Harmony()
    events = decoder.feed(CALL[: CALL.index('"unit"')])
    assert fields_of(events) == ["location"]
    assert not ends_of(events)


def test_a_token_named_in_prose_does_not_hold_the_rest_back() -> None:
    text = "Each message opens with <|start|>assistant, then a channel. " + "More. " * 20
    decoder = Harmony()
    events = decoder.feed(text)
    assert text_of(events) == text
    assert len(errors_of(events)) == 1
    assert decoder.close() == []


@pytest.mark.parametrize("size", [100, 502, 503, 600])
def test_a_header_breaks_at_one_place_in_any_chunking(size: int) -> None:
    # Too long, or a character no header holds: whichever comes first, in every chunking.
    text = "<|start|>" + "a" * size + ",b<|message|>after"
    assert_same_in_any_chunking(Harmony, text, range(0, len(text), 97))
    events = decode_whole(Harmony, text)
    assert text_of(events) == text
    assert len(errors_of(events)) == 1
