"""A lone surrogate in a request is answered properly, never with a plain-text 500.

JSON can spell a lone UTF-16 surrogate (``\\ud83d``), and ``json.loads`` passes CESU-8
bytes through as one. The proxy makes it U+FFFD as it decodes the body, so the
upstream request, the session key and the reply all encode; the class of inputs is
covered by ``tests/backends/test_surrogates.py`` (``encodable_json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    anthropic_text_stream,
    openai_text_stream,
    request_body,
    running,
    settings_for,
)
from toolwire.proxy.encode import sse_bytes
from toolwire.proxy.relay import json_bytes

#: How a lone surrogate can arrive in a body: escaped (high, low, a pair split by
#: other text), or as the raw CESU-8 bytes of one.
FORMS = {
    "high": b'"hi \\ud83d there"',
    "low": b'"hi \\uDE00 there"',
    "reversed pair": b'"hi \\ude00\\ud83d there"',
    "raw bytes": b'"hi \xed\xa0\xbd there"',
}


def _body(text: bytes, model: str, *, stream: bool) -> bytes:
    body = request_body([{"role": "user", "content": "@TEXT@"}], stream=stream)
    body["model"] = model
    body["metadata"] = {"user_id": "@TEXT@"}  # a session key is made from it
    return json.dumps(body).encode().replace(b'"@TEXT@"', text)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("model", ["local,qwen3", "claude,claude-up"])
def test_a_lone_surrogate_in_a_request_is_sent_as_the_replacement_character(
    tmp_path: Path, form: str, model: str
) -> None:
    with FakeServer() as upstream:
        reply = anthropic_text_stream if model.startswith("claude") else openai_text_stream
        upstream.script(Reply(chunks=reply("fine")), Reply(chunks=reply("fine")))
        with running(settings_for(tmp_path, upstream.url, upstream.url)) as url:
            answers = [
                httpx2.post(
                    f"{url}/v1/messages", content=_body(FORMS[form], model, stream=s), timeout=10
                )
                for s in (True, False)
            ]
            count = httpx2.post(
                f"{url}/v1/messages/count_tokens",
                content=_body(FORMS[form], model, stream=False),
                timeout=10,
            )
    for answer in answers:
        assert answer.status_code == 200, answer.text
        assert "fine" in answer.text
    assert count.status_code == 200
    assert count.json()["input_tokens"] > 0
    for sent in upstream.requests:
        text = sent.body.decode("utf-8")  # strict: the upstream got valid UTF-8
        assert "\ufffd" in text
        assert "\\ud83d" not in text.lower()
        assert "\\ude00" not in text.lower()


@given(
    before=st.text(),
    lone=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    after=st.text(),
)
def test_a_reply_with_a_lone_surrogate_is_still_utf8(before: str, lone: str, after: str) -> None:
    """An upstream may stream a lone surrogate escape; the proxy's reply still encodes."""
    text = before + lone + after
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": text},
    }
    for data in (sse_bytes(delta), json_bytes({"type": "message", "content": text})):
        data.decode("utf-8")  # valid UTF-8, whatever the text held
