"""Kimi K2 tool calls: ``<|tool_calls_section_begin|>`` ... ``functions.NAME:IDX`` ..."""

from __future__ import annotations

from tests.decode.formats_support import check_format
from tests.decode.tags_support import (
    assert_same_in_any_chunking,
    calls_of,
    decode_whole,
    ends_of,
    errors_of,
    fields_of,
    start_chunk,
    text_of,
)
from tests.helpers import needs_shared
from toolwire.decode.tags import KimiK2Decoder

_BARE = (
    "a bare counter id ('0') names no tool: vLLM guesses the tool from the declared ones or "
    "from the argument keys; toolwire starts no call it has to guess (the markup goes into "
    "a stream_error)"
)
DIFFERENCES = {
    "vllm-kimi-invalid_json_still_extracted": (
        "arguments that are not valid JSON fail the call (reported, never run); vLLM "
        "returns the call with the broken text"
    ),
    "vllm-kimi-bare_counter": _BARE,
    "vllm-kimi-bare_counter_invalid_json": _BARE,
    "vllm-kimi-bare_counter_infers_by_args": _BARE,
}
# As Kimi K2's chat template renders two calls (the model card's tool-calling guide).
TWO = (
    "Let me look.<|tool_calls_section_begin|><|tool_call_begin|>functions.Read:0"
    '<|tool_call_argument_begin|>{"file_path": "a.py", "limit": 20}<|tool_call_end|>'
    "<|tool_call_begin|>functions.Bash:1<|tool_call_argument_begin|>"
    '{"command": "ls -la"}<|tool_call_end|><|tool_calls_section_end|>Then I will answer.'
)


@needs_shared
def test_the_peers_cases_under_every_chunking() -> None:
    check_format("kimi_k2", KimiK2Decoder, DIFFERENCES)


def test_two_calls_in_one_section() -> None:
    events = decode_whole(KimiK2Decoder, TWO)
    assert calls_of(events) == [
        ("Read", {"file_path": "a.py", "limit": 20}),
        ("Bash", {"command": "ls -la"}),
    ]
    assert text_of(events) == "Let me look.Then I will answer."
    assert fields_of(events) == ["file_path", "limit", "command"]
    assert_same_in_any_chunking(KimiK2Decoder, TWO, [13, 40, 41, 70, 90, 150])


def test_the_call_starts_when_its_id_ends() -> None:
    start_chunk(KimiK2Decoder, TWO, TWO.index("<|tool_call_argument_begin|>"))


def test_markup_inside_a_json_string_is_argument_text() -> None:
    body = '{"content": "print(\\"<|tool_call_end|>\\")\\n", "file_path": "k.py"}'
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.Write:0 "
        f"<|tool_call_argument_begin|>{body} <|tool_call_end|><|tool_calls_section_end|>"
    )
    events = decode_whole(KimiK2Decoder, text)
    assert calls_of(events) == [
        ("Write", {"content": 'print("<|tool_call_end|>")\n', "file_path": "k.py"})
    ]
    assert text_of(events) == ""


def test_broken_arguments_fail_their_call_and_the_next_one_runs() -> None:
    text = TWO.replace('"limit": 20}', '"limit": 20')
    events = decode_whole(KimiK2Decoder, text)
    [read, bash] = ends_of(events)
    assert not read.ok
    assert bash.ok
    assert calls_of(events)[1] == ("Bash", {"command": "ls -la"})
    assert text_of(events) == "Let me look.Then I will answer."


def test_a_header_that_is_no_call_id_leaks_no_markup() -> None:
    text = TWO.replace("functions.Read:0", "functions.Read.0")
    events = decode_whole(KimiK2Decoder, text)
    assert [name for name, _ in calls_of(events)] == ["Bash"]
    assert text_of(events) == "Let me look.Then I will answer."
    [error] = errors_of(events)
    assert "functions.Read.0" in (error.raw or "")
    assert_same_in_any_chunking(KimiK2Decoder, text, range(0, len(text), 11))


def test_a_call_cut_by_max_tokens_fails() -> None:
    cut = TWO[: TWO.index('"a.py"') + 3]
    [end] = ends_of(decode_whole(KimiK2Decoder, cut))
    assert not end.ok


def test_a_call_without_its_section_token_is_read() -> None:
    text = '<|tool_call_begin|>functions.Read:0<|tool_call_argument_begin|>{"file_path": "b"}'
    assert calls_of(decode_whole(KimiK2Decoder, text + "<|tool_call_end|>")) == [
        ("Read", {"file_path": "b"})
    ]


def test_arguments_stream_and_fields_complete_before_the_call_ends() -> None:
    decoder = KimiK2Decoder()
    cut = TWO.index('"limit"')
    events = decoder.feed(TWO[:cut])
    assert fields_of(events) == ["file_path"]  # known before the object closes
    assert not ends_of(events)


def test_a_call_token_named_in_prose_does_not_hold_the_rest_back() -> None:
    text = "Each call opens with <|tool_call_begin|> and its id. " + "More prose. " * 20
    decoder = KimiK2Decoder()
    events = decoder.feed(text)
    assert text_of(events) == text  # shown at once, not at the end of the response
    assert len(errors_of(events)) == 1
    assert decoder.close() == []
