"""Random texts made of each open-weight format's markup: the same events in any chunking.

Pieces of markup in any order and cut anywhere are what a decoder meets when a model
drifts; whatever the decoder makes of them, it must make the same of every chunking, keep
the call invariants, and lose no text.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decode.formats_support import assert_same_in_any_chunking
from tests.helpers import cut_points
from toolwire.decode import TextDecoder
from toolwire.decode.tags import (
    Glm45Decoder,
    HarmonyDecoder,
    KimiK2Decoder,
    MiniMaxM2Decoder,
    SeedOssDecoder,
)

_TOOLS = {"Read": {"properties": {"n": {"type": "integer"}, "p": {"type": "string"}}}}
_COMMON = ["\n", " ", "x", "Read", "n", "p", "1", "{", "}", '"', ":", ",", "<", ">", '"n": 1']
_MARKUP: dict[str, tuple[Callable[[], TextDecoder], list[str]]] = {
    "glm45": (
        partial(Glm45Decoder, _TOOLS),
        ["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"],
    ),
    "kimi_k2": (
        partial(KimiK2Decoder, _TOOLS),
        [
            "<|tool_calls_section_begin|>",
            "<|tool_calls_section_end|>",
            "<|tool_call_begin|>",
            "functions.Read:0",
            "<|tool_call_argument_begin|>",
            "<|tool_call_end|>",
        ],
    ),
    "minimax_m2": (
        partial(MiniMaxM2Decoder, _TOOLS),
        [
            "<minimax:tool_call>",
            "</minimax:tool_call>",
            '<invoke name="Read">',
            "</invoke>",
            '<parameter name="n">',
            "</parameter>",
        ],
    ),
    "openai_harmony": (
        partial(HarmonyDecoder, _TOOLS),
        [
            "<|start|>assistant",
            "<|channel|>analysis",
            "<|channel|>final",
            "<|channel|>commentary to=functions.Read ",
            " to=Read",
            "<|constrain|>json",
            "<|message|>",
            "<|call|>",
            "<|end|>",
            "<|return|>",
        ],
    ),
    "seed_oss": (
        partial(SeedOssDecoder, _TOOLS),
        [
            "<seed:tool_call>",
            "</seed:tool_call>",
            "<seed:think>",
            "</seed:think>",
            "<function=Read>",
            "</function>",
            "<parameter=n>",
            "</parameter>",
        ],
    ),
}


@pytest.mark.parametrize("fmt", sorted(_MARKUP))
@settings(max_examples=250, deadline=None)
@given(data=st.data(), cuts=cut_points(300))
def test_any_text_decodes_the_same_in_any_chunking(
    fmt: str, data: st.DataObject, cuts: list[int]
) -> None:
    factory, markup = _MARKUP[fmt]
    pieces = data.draw(st.lists(st.sampled_from(_COMMON + markup), max_size=40))
    assert_same_in_any_chunking(factory, "".join(pieces), cuts)
