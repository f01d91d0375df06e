"""An event no JSON parser can take (nested past its limit) is a stream error, never a crash.

Every SSE decoder parses each event's data with ``json.loads``, which raises
``RecursionError`` (not ``ValueError``) past a few thousand levels; a decoder must report
that event like any malformed one and keep the rest of the stream.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.decode import decoder_for
from toolwire.events import MessageEnd, StreamError

SSE_FORMATS = ["anthropic", "openai-chat", "openai-responses", "gemini"]


@pytest.mark.parametrize("fmt", SSE_FORMATS)
@given(depth=st.integers(min_value=5_000, max_value=60_000), opener=st.sampled_from("[{"))
def test_an_event_nested_past_the_parser_limit_is_a_stream_error(
    fmt: str, depth: int, opener: str
) -> None:
    nested = opener * depth if opener == "[" else '{"a":' * depth
    decoder = decoder_for(fmt)
    events = decoder.feed(f"data: {nested}\n\n".encode()) + decoder.close()
    errors = [e for e in events if isinstance(e, StreamError)]
    assert errors, events
    assert isinstance(events[-1], MessageEnd)
