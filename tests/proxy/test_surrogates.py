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

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    anthropic_text_stream,
    openai_text_stream,
    request_body,
    running,
    settings_for,
)

#: How a lone surrogate can arrive in a body: escaped (high, low, a pair split by
#: other text), or as the raw CESU-8 bytes of one.
FORMS = {
    "high": b'"hi \\ud83d there"',
    "low": b'"hi \\uDE00 there"',
    "reversed pair": b'"hi \\ude00\\ud83d there"',
    "raw bytes": b'"hi \xed\xa0\xbd there"',
}


def _body(text: bytes, model: str, stream: bool) -> bytes:
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
                httpx2.post(f"{url}/v1/messages", content=_body(FORMS[form], model, s), timeout=10)
                for s in (True, False)
            ]
            count = httpx2.post(
                f"{url}/v1/messages/count_tokens",
                content=_body(FORMS[form], model, False),
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
